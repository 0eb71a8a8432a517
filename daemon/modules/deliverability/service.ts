// GET /stats/deliverability: a tenant's outcomes per provider per UTC day, from the rollup (sql.ts),
// with the period's totals and rates per provider.
import type { Sequelize } from 'sequelize';
import type { TenantContext } from '../../context.ts';
import { ValidationError } from '../../errors.ts';
import {
  DELIVERABILITY_DEFAULT_DAYS,
  DELIVERABILITY_MAX_DAYS,
  type DeliverabilityBody,
  type DeliverabilityQuery,
  type DeliverabilityTotal,
} from '../../../shared/schemas/deliverability.ts';
import { readDeliverability } from './sql.ts';

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

export async function deliverabilityStats(
  deps: { db: { sequelize: Sequelize } },
  ctx: TenantContext,
  query: DeliverabilityQuery,
): Promise<DeliverabilityBody> {
  const { from, to } = deliverabilityPeriod(query);
  const provider = query.provider ?? null;
  const days = await readDeliverability(deps.db.sequelize, { tenantId: ctx.tenantId, from, to, provider });
  const totals = new Map<string, DeliverabilityTotal>();
  for (const row of days) {
    const total = totals.get(row.provider) ?? {
      provider: row.provider,
      delivered: 0,
      deferred: 0,
      bounced: 0,
      complained: 0,
      complaintRate: null,
      bounceRate: null,
    };
    total.delivered += row.delivered;
    total.deferred += row.deferred;
    total.bounced += row.bounced;
    total.complained += row.complained;
    totals.set(row.provider, total);
  }
  for (const total of totals.values()) {
    total.complaintRate = total.delivered > 0 ? total.complained / total.delivered : null;
    const ended = total.delivered + total.bounced;
    total.bounceRate = ended > 0 ? total.bounced / ended : null;
  }
  return {
    from,
    to,
    provider,
    days,
    totals: [...totals.values()].sort((a, b) => (a.provider < b.provider ? -1 : 1)),
  };
}
