// Monthly sending quota. A tenant's limit is its monthlyLimit override or its plan's; usage is
// counted per cycle in one quota_usage row (shard 0), reserved exactly by the accept statement
// (emails/insert-accepted.ts) so no concurrency can pass the 110 % cap. (Rows of other shards are
// from the earlier sharded counters, folded into shard 0 by migration 0105; reads still sum them.)
// A cycle starts on the first of the month (UTC) unless billing restarted it (quota_cycles,
// written by resetQuotaCycle on the payment provider's invoice.paid); it then lasts one month.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { PLANS, planLimits } from '../../../shared/constants.ts';
import { declare } from '../../db/sql.ts';

export const QUOTA_WARNING_PERCENT = 80;
/** Sends are refused once usage would pass this share of the limit (grace up to 110 %). */
export const QUOTA_HARD_STOP_RATIO = 1.1;

export interface QuotaStatus {
  limit: number;
  used: number;
  cycleStart: Date;
  nextCycleAt: Date;
}

export function limitFor(plan: string, monthlyLimit: number | null): number {
  if (monthlyLimit !== null && monthlyLimit !== undefined) return monthlyLimit;
  return planLimits(plan).monthlyEmails;
}

function addMonthsUtc(date: Date, months: number): Date {
  const next = new Date(date.getTime());
  next.setUTCMonth(next.getUTCMonth() + months);
  return next;
}

/** The cycle `now` falls in, given the start billing last set (or none). */
export function cycleAt(now: Date, startedAt: Date | null): { start: Date; next: Date } {
  if (!startedAt || startedAt > now) {
    const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    return { start, next: addMonthsUtc(start, 1) };
  }
  let start = startedAt;
  let months = 0;
  // Without a fresh invoice the cycle keeps rolling monthly from the last billing reset.
  while (addMonthsUtc(startedAt, months + 1) <= now) months += 1;
  start = addMonthsUtc(startedAt, months);
  return { start, next: addMonthsUtc(startedAt, months + 1) };
}

/** A tenant's row as the send path needs it: status, limit, cycle, pause, tracking and recent usage. */
export interface TenantStateRow {
  status: 'active' | 'blocked';
  plan: string;
  monthly_limit: number | null;
  started_at: Date | null;
  sending_paused_at: Date | null;
  sending_paused_reason: string | null;
  track_opens: boolean | null;
  track_clicks: boolean | null;
  /** Usage per cycle start over the last USAGE_WINDOW_DAYS: the current cycle is one of them. */
  usage: { cycleStart: string; used: number }[] | null;
}

/** The send-relevant settings of a tenant, read with its quota. */
export interface TenantSendingState {
  sendingPausedAt: Date | null;
  sendingPausedReason: string | null;
  trackOpens: boolean | null;
  trackClicks: boolean | null;
  quota: QuotaStatus;
}

// A cycle lasts one calendar month (at most 31 days, 31 also when JS month arithmetic overflows),
// so its start is inside this window; the window lets one statement read the usage before the
// cycle is known.
const USAGE_WINDOW_DAYS = 40;

/**
 * One read of everything the send path asks about a tenant ($1 the tenant id). Declared for plain
 * `pg` (the API nodes' tenant-state cache loads it) and run through Sequelize's bind parameters by
 * the callers that have only Sequelize.
 */
export const TENANT_STATE = declare(
  'tenant-state.load',
  `
  SELECT t.status, t.plan, t.monthly_limit, c.started_at, t.sending_paused_at, t.sending_paused_reason, t.track_opens, t.track_clicks,
         (SELECT json_agg(json_build_object('cycleStart', u.cycle_start, 'used', u.used))
            FROM (SELECT cycle_start, SUM(used)::int AS used FROM quota_usage
                   WHERE tenant_id = t.id AND cycle_start > now() - make_interval(days => ${USAGE_WINDOW_DAYS})
                   GROUP BY cycle_start) u) AS usage
    FROM tenants t LEFT JOIN quota_cycles c ON c.tenant_id = t.id WHERE t.id = $1`,
);

/** Limit, cycle and usage of a tenant row at `now`. */
export function quotaOfRow(
  row: Pick<TenantStateRow, 'plan' | 'monthly_limit' | 'started_at' | 'usage'>,
  now = new Date(),
): QuotaStatus {
  const cycle = cycleAt(now, row.started_at ? new Date(row.started_at) : null);
  const current = (row.usage ?? []).find((u) => new Date(u.cycleStart).getTime() === cycle.start.getTime());
  return {
    limit: limitFor(row.plan, row.monthly_limit),
    used: Number(current?.used ?? 0),
    cycleStart: cycle.start,
    nextCycleAt: cycle.next,
  };
}

/**
 * The tenant's pause and tracking defaults with its limit, cycle and usage, in one read. Null when
 * the tenant does not exist.
 */
export async function tenantSendingState(
  sequelize: Sequelize,
  tenantId: string,
  transaction?: Transaction,
): Promise<TenantSendingState | null> {
  const [row] = await sequelize.query<TenantStateRow>(TENANT_STATE.text, {
    bind: [tenantId],
    type: QueryTypes.SELECT,
    transaction,
  });
  if (!row) return null;
  return {
    sendingPausedAt: row.sending_paused_at ? new Date(row.sending_paused_at) : null,
    sendingPausedReason: row.sending_paused_reason,
    trackOpens: row.track_opens,
    trackClicks: row.track_clicks,
    quota: quotaOfRow(row),
  };
}

/** Limit, usage and cycle of a tenant (one read). */
export async function quotaStatus(
  sequelize: Sequelize,
  tenantId: string,
  transaction?: Transaction,
): Promise<QuotaStatus> {
  const state = await tenantSendingState(sequelize, tenantId, transaction);
  if (state) return state.quota;
  const cycle = cycleAt(new Date(), null);
  return { limit: PLANS.free.monthlyEmails, used: 0, cycleStart: cycle.start, nextCycleAt: cycle.next };
}

/** The most sends a cycle may count: 110 % of the limit. */
export function quotaCap(status: Pick<QuotaStatus, 'limit'>): number {
  return Math.floor(status.limit * QUOTA_HARD_STOP_RATIO);
}

/** True when `count` more sends would take usage past 110 % of the limit. */
export function wouldExceedQuota(status: QuotaStatus, count: number): boolean {
  return status.used + count > quotaCap(status);
}

/** Starts a new cycle now (billing's invoice.paid). Usage of the old cycle stays for history. */
export async function resetQuotaCycle(
  sequelize: Sequelize,
  tenantId: string,
  at: Date = new Date(),
  transaction?: Transaction,
): Promise<void> {
  await sequelize.query(
    `INSERT INTO quota_cycles (tenant_id, started_at) VALUES (:tenantId, :at)
     ON CONFLICT (tenant_id) DO UPDATE SET started_at = EXCLUDED.started_at`,
    { replacements: { tenantId, at }, transaction },
  );
}

/** X-Quota-* headers (spec §8: on each answer of a tenant-scoped route). */
export function quotaHeaders(status: QuotaStatus): Record<string, string> {
  const percentage = status.limit > 0 ? Math.floor((status.used / status.limit) * 100) : 100;
  const headers: Record<string, string> = {
    'x-quota-limit': String(status.limit),
    'x-quota-used': String(status.used),
    'x-quota-percentage': String(percentage),
  };
  if (percentage >= QUOTA_WARNING_PERCENT && percentage <= 100) headers['x-quota-warning'] = 'true';
  return headers;
}
