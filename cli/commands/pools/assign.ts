import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { assignPool, describePools, findPool, unassignPool } from '../../services/ip-pools.ts';
import { tenantIdFor } from '../../services/tenant-admin.ts';
import { MAIL_STREAMS, type IpPool } from '../../../shared/schemas/ip-pools.ts';

export default class PoolsAssign extends SvcCommand<typeof PoolsAssign> {
  static override operations = [
    'getTenants',
    'getPlatformIpPools',
    'postPlatformIpPoolsByPoolIdAssignments',
    'deletePlatformIpPoolsByPoolIdAssignmentsByAssignmentId',
  ];
  static override summary =
    "Send a tenant's mail from a pool; --project and --stream narrow it (the most specific assignment wins; platform admins).";
  static override examples = [
    '<%= config.bin %> pools assign "Acme Staging" --pool shared-1',
    '<%= config.bin %> pools assign "Acme Staging" --pool bulk-1 --stream campaign',
    '<%= config.bin %> pools assign "Acme Staging" --pool bulk-1 --stream campaign --remove',
  ];
  static override showHeader = false;
  static override args = {
    tenant: Args.string({ description: 'tenant id, or the name of one of your tenants', required: true }),
  };
  static override flags = {
    pool: Flags.string({ description: 'pool name or id', required: true }),
    project: Flags.string({ description: "only this project's mail" }),
    stream: Flags.option({ options: MAIL_STREAMS, description: 'only transactional mail, or only campaigns' })(),
    remove: Flags.boolean({ description: 'remove this assignment instead' }),
  };

  async run(): Promise<IpPool> {
    const tenantId = await tenantIdFor(this.client, this.args.tenant);
    const pool = await findPool(this.client, this.flags.pool);
    const scope = {
      tenantId,
      projectId: this.flags.project ?? null,
      stream: this.flags.stream ?? null,
    };
    if (this.flags.remove) {
      const assignment = pool.assignments.find(
        (a) => a.tenantId === scope.tenantId && a.projectId === scope.projectId && a.stream === scope.stream,
      );
      if (!assignment) this.error(`Pool ${pool.name} has no such assignment.`, { exit: 1 });
      await unassignPool(this.client, pool.id, assignment.id);
      const after = (await findPool(this.client, pool.id)) as IpPool;
      this.log(describePools([after]));
      return after;
    }
    const updated = await assignPool(this.client, pool.id, {
      tenantId: scope.tenantId,
      ...(scope.projectId ? { projectId: scope.projectId } : {}),
      ...(scope.stream ? { stream: scope.stream } : {}),
    });
    this.log(describePools([updated]));
    return updated;
  }
}
