import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { describePools, findPool, renamePool } from '../../services/ip-pools.ts';
import type { IpPool } from '../../../shared/schemas/ip-pools.ts';

export default class PoolsRename extends SvcCommand<typeof PoolsRename> {
  static override operations = ['getPlatformIpPools', 'patchPlatformIpPoolsByPoolId'];
  static override summary = 'Rename a pool or change its description (platform admins).';
  static override examples = [
    '<%= config.bin %> pools rename shared-1 shared-eu',
    '<%= config.bin %> pools rename shared-1 --description "EU tenants"',
  ];
  static override showHeader = false;
  static override args = {
    pool: Args.string({ description: 'pool name or id', required: true }),
    name: Args.string({ description: 'the new name' }),
  };
  static override flags = { description: Flags.string({ description: 'the new description' }) };

  async run(): Promise<IpPool> {
    const pool = await findPool(this.client, this.args.pool);
    const updated = await renamePool(this.client, pool.id, {
      ...(this.args.name ? { name: this.args.name } : {}),
      ...(this.flags.description !== undefined ? { description: this.flags.description } : {}),
    });
    this.log(describePools([updated]));
    return updated;
  }
}
