import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { deletePool, findPool } from '../../services/ip-pools.ts';

export default class PoolsDelete extends SvcCommand<typeof PoolsDelete> {
  static override operations = ['getPlatformIpPools', 'deletePlatformIpPoolsByPoolId'];
  static override summary = 'Delete a pool no tenant is assigned to (platform admins).';
  static override examples = ['<%= config.bin %> pools delete old-pool'];
  static override showHeader = false;
  static override args = { pool: Args.string({ description: 'pool name or id', required: true }) };

  async run(): Promise<{ ok: true }> {
    const pool = await findPool(this.client, this.args.pool);
    const answer = await deletePool(this.client, pool.id);
    this.log(`Pool ${pool.name} deleted.`);
    return answer;
  }
}
