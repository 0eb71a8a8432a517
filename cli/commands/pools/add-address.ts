import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { addAddress, describePools, findPool } from '../../services/ip-pools.ts';
import type { IpPool } from '../../../shared/schemas/ip-pools.ts';

export default class PoolsAddAddress extends SvcCommand<typeof PoolsAddAddress> {
  static override operations = ['getPlatformIpPools', 'postPlatformIpPoolsByPoolIdAddresses'];
  static override summary =
    'Add a source address to a pool: it warms up from today unless --warm (platform admins). Its PTR must be the EHLO name (svc doctor checks).';
  static override examples = [
    '<%= config.bin %> pools add-address shared-1 203.0.113.10 --ehlo out1.example.com',
    '<%= config.bin %> pools add-address shared-1 203.0.113.11 --ehlo out2.example.com --weight 2 --warm',
  ];
  static override showHeader = false;
  static override args = {
    pool: Args.string({ description: 'pool name or id', required: true }),
    ip: Args.string({ description: 'IPv4 or IPv6 address this host can bind', required: true }),
  };
  static override flags = {
    ehlo: Flags.string({ description: "the name said in EHLO (the IP's PTR)", required: true }),
    weight: Flags.integer({ description: "the address's share of the pool's traffic (default 1)", min: 1, max: 1000 }),
    warm: Flags.boolean({ description: 'the address is already warm: no warm-up ceilings' }),
    'warmup-start': Flags.string({ description: 'day 1 of the warm-up (ISO date), to resume one begun elsewhere' }),
  };

  async run(): Promise<IpPool> {
    const pool = await findPool(this.client, this.args.pool);
    const updated = await addAddress(this.client, pool.id, {
      ip: this.args.ip,
      ehloName: this.flags.ehlo,
      ...(this.flags.weight ? { weight: this.flags.weight } : {}),
      ...(this.flags.warm ? { warmup: false } : {}),
      ...(this.flags['warmup-start'] ? { warmupStartedAt: new Date(this.flags['warmup-start']).toISOString() } : {}),
    });
    this.log(describePools([updated]));
    return updated;
  }
}
