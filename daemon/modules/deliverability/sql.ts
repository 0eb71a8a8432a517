// The deliverability rollup's statements: a tally written in the caller's transaction, and the reads
// behind GET /stats/deliverability. Every read is filtered by tenant.
import { QueryTypes, type Sequelize } from 'sequelize';
import { declare, type TransactionStatements } from '../../db/sql.ts';
import type { DeliverabilityTally } from './tally.ts';
import { wellKnownProviderOf } from './well-known-domains.ts';

// Domains seen with the same provider within a day are not written again: the row is not locked on
// every batch, only when it changes or ages.
const LEARN_PROVIDERS = declare(
  'deliverability.learn-providers',
  `
  INSERT INTO destination_providers (domain, provider)
  SELECT s.domain, s.provider FROM unnest($1::text[], $2::text[]) AS s(domain, provider)
   WHERE NOT EXISTS (SELECT 1 FROM destination_providers e
                      WHERE e.domain = s.domain AND e.provider = s.provider AND e.seen_at > now() - interval '1 day')
   ORDER BY s.domain
  ON CONFLICT (domain) DO UPDATE SET provider = excluded.provider, seen_at = now()`,
);

// One statement for the whole tally, rows in key order (see tally.ts for why).
const ADD_COUNTS = declare(
  'deliverability.add-counts',
  `
  INSERT INTO deliverability_daily AS d (tenant_id, day, provider, delivered, deferred, bounced, complained)
  SELECT t.tenant_id, (now() AT TIME ZONE 'UTC')::date, COALESCE(t.provider, p.provider, t.known, 'default'),
         sum(t.delivered)::int, sum(t.deferred)::int, sum(t.bounced)::int, sum(t.complained)::int
    FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::int[], $6::int[], $7::int[], $8::int[])
         AS t(tenant_id, provider, domain, known, delivered, deferred, bounced, complained)
    LEFT JOIN destination_providers p ON t.provider IS NULL AND p.domain = t.domain
   GROUP BY 1, 2, 3
   ORDER BY 1, 3
  ON CONFLICT (tenant_id, day, provider) DO UPDATE SET
    delivered = d.delivered + excluded.delivered,
    deferred = d.deferred + excluded.deferred,
    bounced = d.bounced + excluded.bounced,
    complained = d.complained + excluded.complained`,
);

/** Writes the tally (and the providers it saw) in `transaction`; nothing when it is empty. */
export async function flushDeliverability(run: TransactionStatements, tally: DeliverabilityTally): Promise<void> {
  if (tally.providersSeen.size > 0) {
    const seen = [...tally.providersSeen].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const values = [seen.map(([domain]) => domain), seen.map(([, provider]) => provider)];
    await run(LEARN_PROVIDERS, values);
  }
  const lines = tally.entries();
  if (lines.length === 0) return;
  await run(ADD_COUNTS, [
    lines.map((line) => line.tenantId),
    lines.map((line) => line.provider),
    lines.map((line) => line.domain),
    lines.map((line) => (line.provider ? null : wellKnownProviderOf(line.domain))),
    lines.map((line) => line.counts.delivered),
    lines.map((line) => line.counts.deferred),
    lines.map((line) => line.counts.bounced),
    lines.map((line) => line.counts.complained),
  ]);
}

export interface DeliverabilityRow {
  day: string;
  provider: string;
  delivered: number;
  deferred: number;
  bounced: number;
  complained: number;
}

/** A tenant's rows between two UTC days (inclusive), optionally of one provider, by day then provider. */
export async function readDeliverability(
  sequelize: Sequelize,
  query: { tenantId: string; from: string; to: string; provider: string | null },
): Promise<DeliverabilityRow[]> {
  return sequelize.query<DeliverabilityRow>(
    `SELECT to_char(day, 'YYYY-MM-DD') AS day, provider, delivered, deferred, bounced, complained
       FROM deliverability_daily
      WHERE tenant_id = :tenantId AND day BETWEEN CAST(:from AS date) AND CAST(:to AS date)
        AND (CAST(:provider AS text) IS NULL OR provider = :provider)
      ORDER BY day, provider`,
    { replacements: query, type: QueryTypes.SELECT },
  );
}

/**
 * Every tenant's rows between two UTC days, summed per provider (the platform's totals). The sums are float8,
 * exact to 2^53: a platform's year of recipients can pass int's 2^31.
 */
export async function readPlatformDeliverability(
  sequelize: Sequelize,
  query: { from: string; to: string; provider: string | null },
): Promise<Array<Omit<DeliverabilityRow, 'day'>>> {
  return sequelize.query(
    `SELECT provider, sum(delivered)::float8 AS delivered, sum(deferred)::float8 AS deferred, sum(bounced)::float8 AS bounced,
            sum(complained)::float8 AS complained
       FROM deliverability_daily
      WHERE day BETWEEN CAST(:from AS date) AND CAST(:to AS date)
        AND (CAST(:provider AS text) IS NULL OR provider = :provider)
      GROUP BY provider ORDER BY provider`,
    { replacements: query, type: QueryTypes.SELECT },
  );
}

/** Each tenant's sums over the period, with its name. */
export async function readTenantsDeliverability(
  sequelize: Sequelize,
  query: { from: string; to: string; provider: string | null },
): Promise<Array<Omit<DeliverabilityRow, 'day' | 'provider'> & { tenant_id: string; tenant_name: string }>> {
  return sequelize.query(
    `SELECT d.tenant_id::text AS tenant_id, t.name AS tenant_name, sum(d.delivered)::float8 AS delivered,
            sum(d.deferred)::float8 AS deferred, sum(d.bounced)::float8 AS bounced, sum(d.complained)::float8 AS complained
       FROM deliverability_daily d JOIN tenants t ON t.id = d.tenant_id
      WHERE d.day BETWEEN CAST(:from AS date) AND CAST(:to AS date)
        AND (CAST(:provider AS text) IS NULL OR d.provider = :provider)
      GROUP BY d.tenant_id, t.name`,
    { replacements: query, type: QueryTypes.SELECT },
  );
}
