import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { createPool, describePools } from '../../services/ip-pools.ts';
import type { IpPool } from '../../../shared/schemas/ip-pools.ts';

export default class PoolsCreate extends SvcCommand<typeof PoolsCreate> {
  static override operations = ['postPlatformIpPools'];
  static override summary = 'Create an IP pool (platform admins); add addresses with `svc pools add-address`.';
  static override examples = [
    '<%= config.bin %> pools create shared-1',
    '<%= config.bin %> pools create eu-1 --address 203.0.113.20=out3.example.com',
  ];
  static override showHeader = false;
  static override args = { name: Args.string({ description: 'name of the pool', required: true }) };
  static override flags = {
    description: Flags.string({ description: 'what the pool is for' }),
    address: Flags.string({
      description: 'ip=ehloName of an address warming up from today (repeatable)',
      multiple: true,
    }),
  };

  async run(): Promise<IpPool> {
    const addresses = (this.flags.address ?? []).map((entry) => {
      const [ip, ehloName] = entry.split('=');
      if (!ip || !ehloName) this.error(`--address takes ip=ehloName, not ${entry}`, { exit: 2 });
      return { ip, ehloName };
    });
    const pool = await createPool(this.client, {
      name: this.args.name,
      ...(this.flags.description ? { description: this.flags.description } : {}),
      ...(addresses.length ? { addresses } : {}),
    });
    this.log(describePools([pool]));
    return pool;
  }
}
