import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { addressOf, describePools, findPool, updateAddress } from '../../services/ip-pools.ts';
import type { IpPool } from '../../../shared/schemas/ip-pools.ts';

export default class PoolsSetAddress extends SvcCommand<typeof PoolsSetAddress> {
  static override operations = ['getPlatformIpPools', 'patchPlatformIpPoolsByPoolIdAddressesByAddressId'];
  static override summary = "Change an address's EHLO name, weight or warm-up start (platform admins).";
  static override examples = [
    '<%= config.bin %> pools set-address shared-1 203.0.113.10 --weight 3',
    '<%= config.bin %> pools set-address shared-1 203.0.113.10 --warmup-start 2026-11-01',
    '<%= config.bin %> pools set-address shared-1 203.0.113.10 --warm',
  ];
  static override showHeader = false;
  static override args = {
    pool: Args.string({ description: 'pool name or id', required: true }),
    address: Args.string({ description: 'the address (IP or id)', required: true }),
  };
  static override flags = {
    ehlo: Flags.string({ description: 'the name said in EHLO' }),
    weight: Flags.integer({ description: "the address's share of the pool's traffic", min: 1, max: 1000 }),
    'warmup-start': Flags.string({ description: 'day 1 of the warm-up (ISO date); restarts or resumes it' }),
    warm: Flags.boolean({ description: 'end the warm-up: no ceilings', exclusive: ['warmup-start'] }),
  };

  async run(): Promise<IpPool> {
    const pool = await findPool(this.client, this.args.pool);
    const address = addressOf(pool, this.args.address);
    const start = this.flags['warmup-start'];
    const updated = await updateAddress(this.client, pool.id, address.id, {
      ...(this.flags.ehlo ? { ehloName: this.flags.ehlo } : {}),
      ...(this.flags.weight ? { weight: this.flags.weight } : {}),
      ...(start ? { warmupStartedAt: new Date(start).toISOString() } : {}),
      ...(this.flags.warm ? { warmupStartedAt: null } : {}),
    });
    this.log(describePools([updated]));
    return updated;
  }
}
