import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { renderDeliverabilityText } from '../../services/deliverability-report.ts';
import { renderDeliverability } from '../../ui/render.ts';
import {
  DELIVERABILITY_DEFAULT_DAYS,
  DELIVERABILITY_MAX_DAYS,
  type DeliverabilityBody,
} from '../../../shared/schemas/deliverability.ts';

export default class StatsDeliverability extends SvcCommand<typeof StatsDeliverability> {
  static override operations = ['getStatsDeliverability'];
  static override summary =
    'Delivered, deferred, bounced and complained recipients per mailbox provider per day, with the complaint rate.';
  static override description =
    'Providers are told by the MX host names the outbound MTA delivered to (google, yahoo, microsoft, apple, default); mail through a relay is placed by the recipient domain. In a terminal it opens a chart (q to quit); piped, or with --json, it prints the report.';
  static override examples = [
    '<%= config.bin %> stats deliverability',
    '<%= config.bin %> stats deliverability --days 7 --provider google',
    '<%= config.bin %> stats deliverability --json',
  ];
  static override flags = {
    days: Flags.integer({
      description: 'days to show, ending today (UTC)',
      min: 1,
      max: DELIVERABILITY_MAX_DAYS,
      default: DELIVERABILITY_DEFAULT_DAYS,
      env: 'SVC_STATS_DAYS',
    }),
    provider: Flags.string({ description: 'only this provider (google, yahoo, microsoft, apple, default, …)' }),
  };

  async run(): Promise<DeliverabilityBody> {
    const to = new Date();
    const from = new Date(to.getTime() - (this.flags.days - 1) * 86_400_000);
    const body = await this.client.deliverabilityStats({
      from: from.toISOString().slice(0, 10),
      to: to.toISOString().slice(0, 10),
      ...(this.flags.provider ? { provider: this.flags.provider } : {}),
    });
    if (this.interactive && !this.jsonEnabled()) await renderDeliverability({ body });
    else this.log(renderDeliverabilityText(body));
    return body;
  }
}
