import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { addressOf, findPool, removeAddress } from '../../services/ip-pools.ts';

export default class PoolsRemoveAddress extends SvcCommand<typeof PoolsRemoveAddress> {
  static override operations = ['getPlatformIpPools', 'deletePlatformIpPoolsByPoolIdAddressesByAddressId'];
  static override summary = 'Remove a source address from its pool (platform admins).';
  static override examples = ['<%= config.bin %> pools remove-address shared-1 203.0.113.10'];
  static override showHeader = false;
  static override args = {
    pool: Args.string({ description: 'pool name or id', required: true }),
    address: Args.string({ description: 'the address (IP or id)', required: true }),
  };

  async run(): Promise<{ ok: true }> {
    const pool = await findPool(this.client, this.args.pool);
    const address = addressOf(pool, this.args.address);
    const answer = await removeAddress(this.client, pool.id, address.id);
    this.log(`${address.ip} left pool ${pool.name}.`);
    return answer;
  }
}
