// Which of a tenant's sends wait on a wait of ours (warm-up, a throttle, a suspension: mta_spool's
// warmup_wait_pool and wait_reason, migrations 0375, 0456–0457), for the logs list (issue 49 §4).
import { declare, type BoundStatement, type Sql } from '../../db/sql.ts';
import { IP_POOLS_CHANNEL } from './pools.ts';
import { SPOOL_CHANNEL } from './spool.ts';

const WAITING_EMAILS = declare(
  'mta_spool_waiting_emails',
  `
  SELECT email_id::text AS email_id, COALESCE(wait_reason, last_response) AS reason, min(run_at) AS until,
         bool_or(warmup_wait_pool IS NOT NULL) AS warmup
    FROM mta_spool
   WHERE email_id = ANY($1::uuid[]) AND tenant_id = $2 AND state IN ('queued', 'deferred') AND run_at > now()
     AND (wait_reason IS NOT NULL OR warmup_wait_pool IS NOT NULL)
   GROUP BY email_id, COALESCE(wait_reason, last_response)`,
);

export interface SpoolWait {
  kind: 'warmup' | 'shaping';
  reason: string;
  until: Date;
}

/** The waits of ours holding the given sends (by email id); a send not waiting is absent. */
export async function waitingEmails(sql: Sql, tenantId: string, emailIds: string[]): Promise<Map<string, SpoolWait>> {
  const waits = new Map<string, SpoolWait>();
  if (emailIds.length === 0) return waits;
  const rows = await sql.rows<{ email_id: string; reason: string | null; until: Date; warmup: boolean }>(
    WAITING_EMAILS,
    [emailIds, tenantId],
  );
  for (const row of rows)
    waits.set(row.email_id, { kind: row.warmup ? 'warmup' : 'shaping', reason: row.reason ?? '', until: row.until });
  return waits;
}

// Rows waiting for warm-up room in pool $1 become due now, and every node's MTA loop hears of it: it drops
// what it cached of pools (IP_POOLS_CHANNEL) and is woken (SPOOL_CHANNEL).
const WAKE_POOL_WAITS = declare(
  'mta_spool_wake_pool_waits',
  `
  WITH woken AS (
    UPDATE mta_spool SET run_at = now(), warmup_wait_pool = NULL
     WHERE warmup_wait_pool = $1 AND state IN ('queued', 'deferred') RETURNING id)
  SELECT count(*) AS n, pg_notify('${IP_POOLS_CHANNEL}', $1::text), pg_notify('${SPOOL_CHANNEL}', '') FROM woken`,
);

/** After a change to pool `poolId` (the admin API's, in its transaction): the change may have made room. */
export function wakePoolWaitsStatement(poolId: string): BoundStatement {
  return { statement: WAKE_POOL_WAITS, values: [poolId] };
}
