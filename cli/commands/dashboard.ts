import { SvcCommand } from '../base-command.ts';
import { loadDashboard, type DashboardData } from '../services/dashboard.ts';
import { renderDashboard } from '../ui/render.ts';

export default class DashboardCommand extends SvcCommand<typeof DashboardCommand> {
  static override summary = 'Overview of the current tenant: quota, queues, recent sends, failing webhooks.';
  static override description = 'In a terminal (also what `svc` alone opens) it refreshes every 5 s and its keys open the other screens. Without a terminal, or with --json, it prints one snapshot.';
  static override examples = ['<%= config.bin %>', '<%= config.bin %> dashboard --json'];

  async run(): Promise<DashboardData | void> {
    if (!this.interactive || this.jsonEnabled()) {
      const data = await loadDashboard(this.client);
      this.log(summarize(data));
      return data;
    }
    const action = await renderDashboard({ load: () => loadDashboard(this.client) });
    if (action) await this.config.runCommand(action, this.flags.profile ? ['--profile', this.flags.profile] : []);
  }
}

function summarize(data: DashboardData): string {
  const line = <T>(label: string, panel: { value: T | null; error: string | null }, show: (value: T) => string) =>
    `${label.padEnd(17)}${panel.value !== null ? show(panel.value) : `unavailable: ${panel.error}`}`;
  return [
    line('tenant', data.tenant, (t) => `${t.name} (${t.plan}, ${t.status})`),
    line('quota this month', data.quota, (q) => `${q.used} / ${q.limit}`),
    line('queue depth', data.queues, (q) => Object.entries(q.queues).map(([name, s]) => `${name} ${s.depth}`).join(', ')),
    line('recent sends', data.recent, (r) => r.map((log) => `${log.status} ${log.to.join(',')}`).join('; ') || 'none'),
    line('failing webhooks', data.failingWebhooks, (w) => w.map((e) => e.url).join(', ') || 'none'),
  ].join('\n');
}
