// TLS-RPT's statements (tables tls_report_counts and tls_report_sends, migrations 0360–0361;
// docs/mta.md): the MTA loop's batched count upsert, run in its commit's transaction, and the daily
// job's claim of a (day, policy domain), its counts, the finish mark and the pruning.
import { declare, type BoundStatement, type Sql } from '../../db/sql.ts';
import type { TlsSession } from '../tls-report.ts';

// Keys are sorted before the insert so that two workers upserting the same keys lock them in one order.
const RECORD_COUNTS = declare(
  'tls_report_counts_add',
  `
  INSERT INTO tls_report_counts AS c
    (day, policy_domain, policy_type, policy_hash, policy_strings, mx_host, sending_ip, receiving_ip, result_type, sessions)
  SELECT (now() AT TIME ZONE 'UTC')::date, r.domain, r.type, md5(r.strings), CAST(r.strings AS jsonb), r.host,
         r.sending, r.receiving, r.result, r.sessions
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[])
      AS r(domain, type, strings, host, sending, receiving, result, sessions)
   ORDER BY r.domain, r.type, md5(r.strings), r.host, r.sending, r.receiving, r.result
  ON CONFLICT (day, policy_domain, policy_type, policy_hash, mx_host, sending_ip, receiving_ip, result_type)
  DO UPDATE SET sessions = c.sessions + EXCLUDED.sessions`,
);

/**
 * The count statement of a batch's TLS sessions, to run in the loop's commit transaction; null when
 * the batch had none. Sessions with the same key are summed here (an upsert may touch a row once).
 */
export function recordTlsCountsStatement(sessions: TlsSession[]): BoundStatement | null {
  const summed = new Map<string, { key: string[]; sessions: number }>();
  for (const s of sessions) {
    const key = [
      s.policy.domain,
      s.policy.type,
      JSON.stringify(s.policy.strings),
      s.host,
      s.sendingIp ?? '',
      s.receivingIp ?? '',
      s.failure ?? '',
    ];
    const id = JSON.stringify(key);
    const entry = summed.get(id) ?? { key, sessions: 0 };
    entry.sessions++;
    summed.set(id, entry);
  }
  if (summed.size === 0) return null;
  const rows = [...summed.values()];
  return {
    statement: RECORD_COUNTS,
    values: [...Array.from({ length: 7 }, (_, i) => rows.map((row) => row.key[i])), rows.map((row) => row.sessions)],
  };
}

export interface TlsCountRow {
  policyType: 'sts' | 'tlsa' | 'no-policy-found';
  policyStrings: string[];
  mxHost: string;
  sendingIp: string;
  receivingIp: string;
  resultType: string;
  sessions: number;
}

// Finished UTC days (before $1's day) with counts, whose report nobody sent nor is sending now.
const DUE_REPORTS = declare(
  'tls_report_due',
  `
  SELECT DISTINCT to_char(c.day, 'YYYY-MM-DD') AS day, c.policy_domain AS domain
    FROM tls_report_counts c
   WHERE c.day < ($1::timestamptz AT TIME ZONE 'UTC')::date
     AND NOT EXISTS (SELECT 1 FROM tls_report_sends s
                      WHERE s.day = c.day AND s.policy_domain = c.policy_domain
                        AND (s.finished_at IS NOT NULL OR s.claimed_until >= now()))
   ORDER BY 1, 2
   LIMIT $2`,
);

// Insert-once, or take over a lease that ran out before its report was finished.
const CLAIM_REPORT = declare(
  'tls_report_claim',
  `
  INSERT INTO tls_report_sends AS s (day, policy_domain, claimed_by, claimed_until)
  VALUES ($1::date, $2, $3, now() + $4 * interval '1 millisecond')
  ON CONFLICT (day, policy_domain) DO UPDATE
     SET claimed_by = EXCLUDED.claimed_by, claimed_until = EXCLUDED.claimed_until
   WHERE s.finished_at IS NULL AND s.claimed_until < now()
  RETURNING s.claimed_by, s.report_id, s.outcome`,
);

const REPORT_COUNTS = declare(
  'tls_report_counts_of',
  `
  SELECT policy_type AS "policyType", policy_strings AS "policyStrings", mx_host AS "mxHost",
         sending_ip AS "sendingIp", receiving_ip AS "receivingIp", result_type AS "resultType",
         sessions::int AS sessions
    FROM tls_report_counts
   WHERE day = $1::date AND policy_domain = $2
   ORDER BY policy_type, policy_hash, result_type, mx_host, sending_ip, receiving_ip`,
);

const FINISH_REPORT = declare(
  'tls_report_finish',
  `
  UPDATE tls_report_sends SET finished_at = now(), report_id = $4, outcome = $5::jsonb
   WHERE day = $1::date AND policy_domain = $2 AND claimed_by = $3 AND finished_at IS NULL`,
);

// What an unfinished report reached so far (its id, and per address the outcome and tries), kept for the
// run that takes it over when the lease ends.
const SAVE_PROGRESS = declare(
  'tls_report_progress',
  `
  UPDATE tls_report_sends SET report_id = $4, outcome = $5::jsonb
   WHERE day = $1::date AND policy_domain = $2 AND claimed_by = $3 AND finished_at IS NULL`,
);

const PRUNE_COUNTS = declare(
  'tls_report_counts_prune',
  `DELETE FROM tls_report_counts WHERE day < ($1::timestamptz AT TIME ZONE 'UTC')::date - $2::int`,
);

const PRUNE_SENDS = declare(
  'tls_report_sends_prune',
  `DELETE FROM tls_report_sends WHERE day < ($1::timestamptz AT TIME ZONE 'UTC')::date - $2::int`,
);

export function dueTlsReports(sql: Sql, now: Date, limit: number): Promise<{ day: string; domain: string }[]> {
  return sql.rows(DUE_REPORTS, [now, limit]);
}

/**
 * The (day, domain) report when this worker now holds it (nobody finished it or holds it), with what an
 * earlier run reached (its report id and outcomes, when it was tried before); null when another holds it.
 */
export async function claimTlsReport(
  sql: Sql,
  report: { day: string; domain: string },
  owner: string,
  leaseMs: number,
): Promise<{ reportId: string | null; outcomes: unknown[] } | null> {
  const rows = await sql.rows<{ claimed_by: string; report_id: string | null; outcome: unknown }>(CLAIM_REPORT, [
    report.day,
    report.domain,
    owner,
    leaseMs,
  ]);
  if (rows.length !== 1 || rows[0].claimed_by !== owner) return null;
  return { reportId: rows[0].report_id, outcomes: Array.isArray(rows[0].outcome) ? rows[0].outcome : [] };
}

export function tlsReportCounts(sql: Sql, report: { day: string; domain: string }): Promise<TlsCountRow[]> {
  return sql.rows(REPORT_COUNTS, [report.day, report.domain]);
}

/**
 * Writes the report's id and outcome per address on its mark: `finished`, it is done; otherwise the run
 * after the lease takes it over with them (an address that refused and has tries left).
 */
export function recordTlsReportOutcome(
  sql: Sql,
  report: { day: string; domain: string },
  owner: string,
  reportId: string,
  outcome: unknown,
  finished: boolean,
): Promise<number> {
  return sql.count(finished ? FINISH_REPORT : SAVE_PROGRESS, [
    report.day,
    report.domain,
    owner,
    reportId,
    JSON.stringify(outcome),
  ]);
}

/** Counts and send marks of days more than `retentionDays` before `now`'s UTC day. */
export async function pruneTlsReports(sql: Sql, now: Date, retentionDays: number): Promise<number> {
  const counts = await sql.count(PRUNE_COUNTS, [now, retentionDays]);
  await sql.count(PRUNE_SENDS, [now, retentionDays]);
  return counts;
}

const SEND_STATE = declare(
  'tls_report_send_state',
  `
  SELECT report_id, outcome, finished_at, claimed_until > now() AS claimed
    FROM tls_report_sends
   WHERE day = $1::date AND policy_domain = $2`,
);

// A report sent again by an operator (svc tls-reports send): finished now with what this send reached;
// the daily job then leaves the day alone.
const RECORD_RESEND = declare(
  'tls_report_resend',
  `
  INSERT INTO tls_report_sends AS s (day, policy_domain, claimed_by, claimed_until, finished_at, report_id, outcome)
  VALUES ($1::date, $2, $3, now(), now(), $4, $5::jsonb)
  ON CONFLICT (day, policy_domain) DO UPDATE
     SET finished_at = now(), report_id = EXCLUDED.report_id, outcome = EXCLUDED.outcome,
         claimed_by = EXCLUDED.claimed_by, claimed_until = now()`,
);

export interface TlsReportSendState {
  reportId: string | null;
  outcomes: unknown[];
  finishedAt: Date | null;
  /** A daemon holds it right now (the daily job is sending it). */
  claimed: boolean;
}

/** What the daily job (or an operator) did with the (day, domain) report so far; null: never tried. */
export async function tlsReportSendState(
  sql: Sql,
  report: { day: string; domain: string },
): Promise<TlsReportSendState | null> {
  const [row] = await sql.rows<{
    report_id: string | null;
    outcome: unknown;
    finished_at: Date | null;
    claimed: boolean;
  }>(SEND_STATE, [report.day, report.domain]);
  if (!row) return null;
  return {
    reportId: row.report_id,
    outcomes: Array.isArray(row.outcome) ? row.outcome : [],
    finishedAt: row.finished_at,
    claimed: row.claimed,
  };
}

export async function recordTlsReportResend(
  sql: Sql,
  report: { day: string; domain: string },
  owner: string,
  reportId: string,
  outcomes: unknown[],
): Promise<void> {
  await sql.rows(RECORD_RESEND, [report.day, report.domain, owner, reportId, JSON.stringify(outcomes)]);
}
