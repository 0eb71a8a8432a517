import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { table } from '../../format.ts';
import { percent } from '../../services/deliverability-report.ts';
import {
  DELIVERABILITY_DEFAULT_DAYS,
  DELIVERABILITY_MAX_DAYS,
  type PlatformDeliverabilityBody,
} from '../../../shared/schemas/deliverability.ts';

export default class PlatformDeliverability extends SvcCommand<typeof PlatformDeliverability> {
  static override operations = ['getPlatformDeliverability'];
  static override summary =
    "Every tenant's delivered, deferred, bounced and complained recipients per provider, and the tenants worst first (platform admins).";
  static override description =
    'Tenants are ranked by complaint rate, then bounce rate, then volume: the ones to look at before a mailbox ' +
    'provider does (Gmail and Yahoo ask for complaints under 0.1 %, and act at 0.3 %).';
  static override examples = [
    '<%= config.bin %> platform deliverability',
    '<%= config.bin %> platform deliverability --days 7 --provider google --limit 10',
    '<%= config.bin %> platform deliverability --json',
  ];
  static override showHeader = false;
  static override flags = {
    days: Flags.integer({
      description: 'days to cover, ending today (UTC)',
      min: 1,
      max: DELIVERABILITY_MAX_DAYS,
      default: DELIVERABILITY_DEFAULT_DAYS,
      env: 'SVC_STATS_DAYS',
    }),
    provider: Flags.string({ description: 'only this provider (google, yahoo, microsoft, apple, default, …)' }),
    limit: Flags.integer({ description: 'tenants listed (default 50)', min: 1, max: 500 }),
  };

  async run(): Promise<PlatformDeliverabilityBody> {
    const to = new Date();
    const from = new Date(to.getTime() - (this.flags.days - 1) * 86_400_000);
    const body = await this.client.http.request<PlatformDeliverabilityBody>('GET', '/platform/deliverability', {
      tenant: false,
      query: {
        from: from.toISOString().slice(0, 10),
        to: to.toISOString().slice(0, 10),
        ...(this.flags.provider ? { provider: this.flags.provider } : {}),
        ...(this.flags.limit ? { limit: this.flags.limit } : {}),
      },
    });
    const counts = [
      { header: 'DELIVERED', value: (r: { delivered: number }) => String(r.delivered) },
      { header: 'DEFERRED', value: (r: { deferred: number }) => String(r.deferred) },
      { header: 'BOUNCED', value: (r: { bounced: number }) => String(r.bounced) },
      { header: 'COMPLAINED', value: (r: { complained: number }) => String(r.complained) },
      { header: 'COMPLAINT RATE', value: (r: { complaintRate: number | null }) => percent(r.complaintRate) },
      { header: 'BOUNCE RATE', value: (r: { bounceRate: number | null }) => percent(r.bounceRate) },
    ];
    this.log(
      `Deliverability of every tenant, ${body.from} to ${body.to} (UTC)${body.provider ? `, ${body.provider}` : ''}`,
    );
    this.log(
      table(body.totals, [{ header: 'PROVIDER', value: (t) => t.provider }, ...counts], 'No outcomes in the period.'),
    );
    this.log('');
    this.log(
      `Tenants, worst first (${body.tenants.length} of ${body.tenantCount}):\n` +
        table(body.tenants, [{ header: 'TENANT', value: (t) => `${t.tenantName} ${t.tenantId}` }, ...counts], 'None.'),
    );
    return body;
  }
}
