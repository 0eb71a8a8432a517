import { readFileSync } from 'node:fs';
import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { findPool, resetSchedule, setSchedule } from '../../services/ip-pools.ts';
import type { WarmupSchedule } from '../../../shared/schemas/ip-pools.ts';

export default class PoolsSchedule extends SvcCommand<typeof PoolsSchedule> {
  static override operations = [
    'getPlatformIpPools',
    'putPlatformIpPoolsByPoolIdSchedule',
    'deletePlatformIpPoolsByPoolIdSchedule',
  ];
  static override summary =
    "Show or edit a pool's warm-up schedule: per provider, the most messages per UTC day on day 1, 2, … (platform admins).";
  static override examples = [
    '<%= config.bin %> pools schedule shared-1',
    '<%= config.bin %> pools schedule shared-1 --json > schedule.json',
    '<%= config.bin %> pools schedule shared-1 --file schedule.json',
    '<%= config.bin %> pools schedule shared-1 --reset',
  ];
  static override showHeader = false;
  static override args = { pool: Args.string({ description: 'pool name or id', required: true }) };
  static override flags = {
    file: Flags.string({
      description: 'JSON file of the new schedule: { "days": 30, "providers": { "default": [...], "google": [...] } }',
      exclusive: ['reset'],
    }),
    reset: Flags.boolean({ description: 'go back to the shipped 30-day schedule' }),
  };

  async run(): Promise<WarmupSchedule> {
    let pool = await findPool(this.client, this.args.pool);
    if (this.flags.file) {
      const schedule = JSON.parse(readFileSync(this.flags.file, 'utf8')) as WarmupSchedule;
      pool = await setSchedule(this.client, pool.id, schedule);
    } else if (this.flags.reset) pool = await resetSchedule(this.client, pool.id);
    const { schedule } = pool;
    this.log(`${pool.name}: ${schedule.days}-day warm-up${pool.defaultSchedule ? ' (the shipped default)' : ''}`);
    for (const [provider, ceilings] of Object.entries(schedule.providers))
      this.log(`  ${provider.padEnd(10)} ${ceilings.map((ceiling, day) => `d${day + 1} ${ceiling}`).join('  ')}`);
    return schedule;
  }
}
