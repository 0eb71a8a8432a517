// GET /stats/deliverability: a tenant's outcomes per provider per UTC day, from the rollup (sql.ts),
// with the period's totals and rates per provider. GET /platform/deliverability: the same totals over
// every tenant, and the tenants ranked worst first.
import type { Sequelize } from 'sequelize';
import type { TenantContext } from '../../context.ts';
import { ValidationError } from '../../errors.ts';
import {
  DELIVERABILITY_DEFAULT_DAYS,
  DELIVERABILITY_MAX_DAYS,
  type DeliverabilityBody,
  type DeliverabilityQuery,
  type DeliverabilityTotal,
  type PlatformDeliverabilityBody,
  type PlatformDeliverabilityQuery,
  type TenantDeliverability,
} from '../../../shared/schemas/deliverability.ts';
import { readDeliverability, readPlatformDeliverability, readTenantsDeliverability } from './sql.ts';

const DAY_MS = 86_400_000;
const isoDay = (date: Date) => date.toISOString().slice(0, 10);

/** The period asked for, defaults filled: `to` today (UTC), `from` 29 days before it. */
export function deliverabilityPeriod(query: DeliverabilityQuery, now = new Date()): { from: string; to: string } {
  const to = query.to ?? isoDay(now);
  const from =
    query.from ?? isoDay(new Date(Date.parse(`${to}T00:00:00Z`) - (DELIVERABILITY_DEFAULT_DAYS - 1) * DAY_MS));
  const span = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS + 1;
  if (!Number.isFinite(span)) throw new ValidationError('from and to must be days (YYYY-MM-DD).');
  if (span < 1)
    throw new ValidationError('from is after to.', [{ field: 'from', message: `must be on or before ${to}` }]);
  if (span > DELIVERABILITY_MAX_DAYS)
    throw new ValidationError(`The period is ${span} days; at most ${DELIVERABILITY_MAX_DAYS} can be asked at once.`, [
      { field: 'from', message: `must be at most ${DELIVERABILITY_MAX_DAYS - 1} days before to` },
    ]);
  return { from, to };
}

interface Counts {
  delivered: number;
  deferred: number;
  bounced: number;
  complained: number;
}

/** The counts with their rates: complaints per delivered recipient, bounces per ended one (null: none). */
function withRates<T extends Counts>(counts: T): T & { complaintRate: number | null; bounceRate: number | null } {
  const ended = counts.delivered + counts.bounced;
  return {
    ...counts,
    complaintRate: counts.delivered > 0 ? counts.complained / counts.delivered : null,
    bounceRate: ended > 0 ? counts.bounced / ended : null,
  };
}

export async function deliverabilityStats(
  deps: { db: { sequelize: Sequelize } },
  ctx: TenantContext,
  query: DeliverabilityQuery,
): Promise<DeliverabilityBody> {
  const { from, to } = deliverabilityPeriod(query);
  const provider = query.provider ?? null;
  const days = await readDeliverability(deps.db.sequelize, { tenantId: ctx.tenantId, from, to, provider });
  const sums = new Map<string, Counts & { provider: string }>();
  for (const row of days) {
    const sum = sums.get(row.provider) ?? {
      provider: row.provider,
      delivered: 0,
      deferred: 0,
      bounced: 0,
      complained: 0,
    };
    sum.delivered += row.delivered;
    sum.deferred += row.deferred;
    sum.bounced += row.bounced;
    sum.complained += row.complained;
    sums.set(row.provider, sum);
  }
  const totals: DeliverabilityTotal[] = [...sums.values()].map(withRates);
  return { from, to, provider, days, totals: totals.sort((a, b) => (a.provider < b.provider ? -1 : 1)) };
}

/** Worst first: complaint rate, then bounce rate (none counts as 0), then volume. */
function worstFirst(a: TenantDeliverability, b: TenantDeliverability): number {
  return (
    (b.complaintRate ?? 0) - (a.complaintRate ?? 0) ||
    (b.bounceRate ?? 0) - (a.bounceRate ?? 0) ||
    b.delivered + b.bounced - (a.delivered + a.bounced) ||
    (a.tenantName < b.tenantName ? -1 : 1)
  );
}

/** The platform's outcomes per provider, and its tenants ranked worst first (platform admins). */
export async function platformDeliverability(
  deps: { db: { sequelize: Sequelize } },
  query: PlatformDeliverabilityQuery,
): Promise<PlatformDeliverabilityBody> {
  const { from, to } = deliverabilityPeriod(query);
  const provider = query.provider ?? null;
  const [totals, tenants] = await Promise.all([
    readPlatformDeliverability(deps.db.sequelize, { from, to, provider }),
    readTenantsDeliverability(deps.db.sequelize, { from, to, provider }),
  ]);
  const ranked = tenants
    .map(({ tenant_id, tenant_name, ...counts }) =>
      withRates({ tenantId: tenant_id, tenantName: tenant_name, ...counts }),
    )
    .sort(worstFirst);
  return {
    from,
    to,
    provider,
    totals: totals.map(withRates),
    tenants: ranked.slice(0, query.limit ?? 50),
    tenantCount: ranked.length,
  };
}
