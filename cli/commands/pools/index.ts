import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { describePools, findPool, getPool, listPools } from '../../services/ip-pools.ts';
import { renderPools } from '../../ui/render.ts';
import type { IpPoolList } from '../../../shared/schemas/ip-pools.ts';

export default class Pools extends SvcCommand<typeof Pools> {
  static override operations = ['getPlatformIpPools', 'getPlatformIpPoolsByPoolId'];
  static override summary =
    "IP pools: their addresses, warm-up day N of the schedule, and today's count and ceiling per provider (platform admins).";
  static override description =
    'In a terminal it shows the pools screen (refreshed every 5 s, warm-up bars per provider); without one, or with --json, it prints one snapshot. ' +
    'Counts are per UTC day; an address without a ceiling is warm.';
  static override examples = ['<%= config.bin %> pools', '<%= config.bin %> pools --pool bulk-1 --json'];
  static override showHeader = false;
  static override flags = {
    pool: Flags.string({ description: 'only this pool (name or id)' }),
  };

  async run(): Promise<IpPoolList> {
    const load = async (): Promise<IpPoolList> =>
      this.flags.pool
        ? { data: [await getPool(this.client, (await findPool(this.client, this.flags.pool)).id)] }
        : listPools(this.client);
    const pools = await load();
    if (this.interactive && !this.jsonEnabled()) {
      await renderPools({ load: async () => (await load()).data });
      return pools;
    }
    this.log(describePools(pools.data));
    return pools;
  }
}
