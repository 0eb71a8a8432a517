import { Args, Flags } from '@oclif/core';
import { MissingInputError } from '../../errors.ts';
import { SvcCommand } from '../../base-command.ts';
import { keyValue } from '../../format.ts';
import type { TenantSummary } from '../../api-types.ts';

export default class TenantsCreate extends SvcCommand<typeof TenantsCreate> {
  static override operations = ['postTenants'];
  static override summary = 'Create a tenant (you become its owner) and make it current.';
  static override examples = [
    '<%= config.bin %> tenants create Acme',
    '<%= config.bin %> tenants create "Acme Staging" --no-use --json',
  ];
  static override args = { name: Args.string({ description: 'tenant name' }) };
  static override flags = {
    name: Flags.string({ description: 'tenant name (same as the argument)' }),
    use: Flags.boolean({ description: 'make the new tenant current', default: true, allowNo: true }),
  };

  async run(): Promise<TenantSummary & { current: boolean }> {
    const name = this.args.name ?? this.flags.name;
    if (!name) throw new MissingInputError('Name the tenant: `svc tenants create <name>`');
    const tenant = await this.client.createTenant(name);
    if (this.flags.use) this.client.http.saveProfile({ tenantId: tenant.id, tenantName: tenant.name });
    this.log(
      keyValue([
        ['id', tenant.id],
        ['name', tenant.name],
        ['plan', tenant.plan],
        ['current', this.flags.use ? 'yes' : 'no'],
      ]),
    );
    return { ...tenant, current: this.flags.use };
  }
}
