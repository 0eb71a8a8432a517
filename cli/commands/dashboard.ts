import { SvcCommand } from '../base-command.ts';
import { failingInboundTexts, inboundDayText, loadDashboard, type DashboardData } from '../services/dashboard.ts';
import { renderDashboard } from '../ui/render.ts';
import { followLogs } from '../services/log-feed.ts';
import { captureCommand } from '../services/subcommand.ts';
import type { DashboardViews } from '../ui/Dashboard.tsx';
import { sendingStateOf } from '../services/sending-state.ts';
import { outboundQueue } from '../services/outbound-queue.ts';

export default class DashboardCommand extends SvcCommand<typeof DashboardCommand> {
  static override operations = [
    'getTenants',
    'getTenantsByTenantId',
    'getEmailsLogs',
    'getEmailsLogsById',
    'getWebhooksEndpoints',
    'getInboundStats',
    'getHealthReady',
    'getHealthQueues',
    'getPlatformQueue',
    'postPlatformQueueByDomainRetry',
    'postPlatformQueueByDomainHold',
    'postPlatformQueueByDomainRelease',
  ];
  static override summary =
    'Overview of the current tenant: quota, queues, recent sends, failing webhooks, inbound mail of the last 24 h.';
  static override description =
    'In a terminal (also what `svc` alone opens) it refreshes every 5 s and its keys open the other screens inside it (Esc comes back). Without a terminal, or with --json, it prints one snapshot.';
  static override examples = ['<%= config.bin %>', '<%= config.bin %> dashboard --json'];

  async run(): Promise<DashboardData | void> {
    if (!this.interactive || this.jsonEnabled()) {
      const data = await loadDashboard(this.client);
      this.log(summarize(data));
      return data;
    }
    const profile = this.flags.profile ? ['--profile', this.flags.profile] : [];
    const views: DashboardViews = {
      text: (action) => captureCommand([...action.split(':'), ...profile], process.stdout.columns || 80),
      logTail: {
        source: (signal, onMode) => followLogs(this.client, { signal, onMode }),
        loadDetail: (id) => this.client.getLog(id),
        rows: Math.max(3, (process.stdout.rows || 24) - 8),
      },
      tenants: async () =>
        (await this.client.listTenants()).map((tenant) => ({ label: tenant.name, value: tenant.id, hint: tenant.id })),
      useTenant: async (id) => {
        const tenant = (await this.client.listTenants()).find((candidate) => candidate.id === id);
        if (tenant) this.client.http.saveProfile({ tenantId: tenant.id, tenantName: tenant.name });
      },
      queue: {
        load: () => outboundQueue.list(this.client),
        actions: {
          retry: async (domain) => void (await outboundQueue.retry(this.client, domain)),
          hold: async (domain) => void (await outboundQueue.hold(this.client, domain)),
          release: async (domain) => void (await outboundQueue.release(this.client, domain)),
        },
      },
    };
    await renderDashboard({ load: () => loadDashboard(this.client), views });
  }
}

function summarize(data: DashboardData): string {
  const line = <T>(label: string, panel: { value: T | null; error: string | null }, show: (value: T) => string) =>
    `${label.padEnd(17)}${panel.value !== null ? show(panel.value) : `unavailable: ${panel.error}`}`;
  return [
    line('tenant', data.tenant, (t) => `${t.name} (${t.plan}, ${t.status})`),
    line('sending', data.tenant, (t) => sendingStateOf(t)?.message ?? 'ok'),
    line('quota this month', data.quota, (q) => `${q.used} / ${q.limit}`),
    line('queue depth', data.queues, (q) =>
      Object.entries(q.queues)
        .map(([name, s]) => `${name} ${s.depth}`)
        .join(', '),
    ),
    line('outbound', data.queues, ({ outbound: o }) =>
      // A daemon older than the outbound MTA answers without it.
      !o
        ? 'not reported by this daemon'
        : `${o.queued} queued, ${o.deferred} deferred, ${o.inFlight} in flight` +
          (o.heldDestinations ? `, ${o.heldDestinations} destination(s) held` : '') +
          (o.stuck ? ', stuck' : ''),
    ),
    line('recent sends', data.recent, (r) => r.map((log) => `${log.status} ${log.to.join(',')}`).join('; ') || 'none'),
    line('failing webhooks', data.failingWebhooks, (w) => w.map((e) => e.url).join(', ') || 'none'),
    ...(data.inbound ? [line('inbound 24 h', data.inbound, inboundDayText)] : []),
    ...(data.inbound?.value
      ? failingInboundTexts(data.inbound.value).map((text) => `${'inbound failing'.padEnd(17)}${text}`)
      : []),
  ].join('\n');
}
