// What the dashboard shows, fetched in parallel; a panel whose endpoint fails shows its sentence.
import type { SvcClient } from '../client.ts';
import type { QueuesHealth, ReadyWarning } from '../../shared/schemas/health.ts';
import type { EmailLog, TenantSummary } from '../api-types.ts';
import type { WebhookEndpoint } from '../../shared/schemas/webhooks.ts';
import { PLANS, type PlanSlug } from '../../shared/constants.ts';
import type { InboundStats } from '../../shared/schemas/inbound.ts';
import { getStats } from './inbound-routing.ts';

export interface Panel<T> {
  value: T | null;
  error: string | null;
}

export interface QuotaView {
  used: number;
  limit: number;
  /** 'headers' when a send answer reported it; 'logs' when counted from this month's logs. */
  source: 'headers' | 'logs';
}

export interface DashboardData {
  tenant: Panel<TenantSummary>;
  quota: Panel<QuotaView>;
  queues: Panel<QueuesHealth>;
  recent: Panel<EmailLog[]>;
  failingWebhooks: Panel<WebhookEndpoint[]>;
  /** Routed mail of the last 24 h and 7 days by status, and the endpoints failing at it (GET /inbound/stats). */
  inbound?: Panel<InboundStats>;
  /** The daemon's readiness warnings (system mail sender not set, unsigned). */
  warnings: Panel<ReadyWarning[]>;
  loadedAt: string;
}

async function panel<T>(work: () => Promise<T>): Promise<Panel<T>> {
  try {
    return { value: await work(), error: null };
  } catch (error) {
    return { value: null, error: (error as Error).message };
  }
}

function monthStart(now: Date): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
}

export async function loadDashboard(client: SvcClient, now = new Date()): Promise<DashboardData> {
  const tenantId = client.http.tenantId;
  const [tenant, queues, recent, failingWebhooks, sentThisMonth, warnings, inbound] = await Promise.all([
    panel(async () => {
      if (!tenantId) throw new Error('no tenant id (the API key decides it)');
      return client.getTenant(tenantId);
    }),
    panel(() => client.queues()),
    panel(async () => (await client.listLogs({ limit: 8 })).data),
    panel(async () =>
      (await client.listWebhooks({ limit: 100 })).data.filter(
        (endpoint) => !endpoint.enabled || endpoint.consecutiveFailures > 0,
      ),
    ),
    panel(async () => (await client.listLogs({ since: monthStart(now), limit: 1 })).meta.total),
    panel(async () => (await client.ready()).warnings ?? []),
    panel(() => getStats(client)),
  ]);
  const quota = await panel<QuotaView>(async () => {
    const reported = client.http.lastQuota;
    if (reported) return { used: reported.used, limit: reported.limit, source: 'headers' };
    if (sentThisMonth.value === null) throw new Error(sentThisMonth.error ?? 'unknown usage');
    const plan = tenant.value?.plan as PlanSlug | undefined;
    const limit = tenant.value?.monthlyLimit ?? (plan && PLANS[plan] ? PLANS[plan].monthlyEmails : null);
    if (limit === null) throw new Error(tenant.error ?? 'unknown plan');
    return { used: sentThisMonth.value, limit, source: 'logs' };
  });
  return { tenant, quota, queues, recent, failingWebhooks, inbound, warnings, loadedAt: now.toISOString() };
}

/** "12 received, 1 failed" over the last 24 h (the dashboard's line and its text snapshot). */
export function inboundDayText(stats: InboundStats): string {
  return `${stats.last24h.total} received, ${stats.last24h.failed} failed`;
}

/** Failing inbound endpoints shown on the dashboard at most (GET /inbound/stats lists up to 20). */
export const DASHBOARD_FAILING_INBOUND_ENDPOINTS = 3;

/** "https://app.example/hooks: connect ECONNREFUSED (3 failed, switched off)", one per failing endpoint. */
export function failingInboundTexts(stats: InboundStats): string[] {
  return stats.failingEndpoints.slice(0, DASHBOARD_FAILING_INBOUND_ENDPOINTS).map((e) => {
    const notes = [
      e.failed ? `${e.failed} failed` : null,
      e.retrying ? `${e.retrying} retrying` : null,
      e.enabled ? null : 'switched off',
    ].filter(Boolean);
    return `${e.url}: ${e.lastError}${notes.length ? ` (${notes.join(', ')})` : ''}`;
  });
}
