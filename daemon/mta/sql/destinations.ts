// The outbound queue per destination domain (issue 28, docs/mta.md "Visibility"): what `svc queue`,
// its TUI screen and /health/queues read from mta_spool, and the operator's actions on one domain
// (retry now, hold, release) with the holds in mta_destinations (migration 0350). Declared pg
// statements (daemon/db/sql.ts); the actions are run in the caller's transaction with their audit row.
import { declare, type Sql } from '../../db/sql.ts';
import { SPOOL_CHANNEL } from './spool.ts';

/** One destination domain as the operator sees it. Times are Dates; ages in milliseconds. */
export interface DestinationRow {
  domain: string;
  queued: number;
  deferred: number;
  inFlight: number;
  /**
   * Held by a wait of ours (warm-up: warmup_wait_pool; a throttle, suspension or pacing: wait_reason, until
   * its run_at), not counted in queued or deferred.
   */
  waiting: number;
  /** The wait's reason and when the first waiting message goes. */
  waitReason: string | null;
  waitUntil: Date | null;
  /** When the oldest message still spooled for the domain was accepted. */
  oldestAt: Date | null;
  /** The earliest next try of a deferred message. */
  nextTryAt: Date | null;
  lastAttemptAt: Date | null;
  /** The reply of the latest attempt that left a message deferred. */
  lastResponse: string | null;
  /** How long the oldest due, unclaimed message has waited past its run time (0 when none waits). */
  oldestWaitingAgeMs: number;
  heldAt: Date | null;
  heldBy: string | null;
  heldByEmail: string | null;
  holdReason: string | null;
}

export interface DestinationTotals {
  queued: number;
  deferred: number;
  inFlight: number;
  heldDestinations: number;
  /** Over destinations that are not held: the oldest due, unclaimed message's wait past its run time. */
  oldestWaitingAgeMs: number;
}

// Counts per domain in one pass (a hash aggregate) over the spool, the holds beside them (a held
// domain with nothing spooled is listed too), ordered oldest first and paged. The latest response is
// taken in the same pass: max() over "attempt time as fixed-width UTC digits ‖ response" picks the
// response of the latest attempt, and substr() drops the 20 digits (a DISTINCT ON of the page's rows
// instead cost a second scan and a sort: 400 ms against 227 ms over 200,000 rows, 1,000 domains, at
// load 7.7 on the 2-core machine). No index on domain: the spool's hot path keeps its two indexes,
// and an operator's read costs one sequential scan.
const LIST_DESTINATIONS = declare(
  'mta_destinations_list',
  `
  WITH spool AS (
    SELECT domain,
           count(*) FILTER (WHERE state = 'queued' AND NOT (warmup_wait_pool IS NOT NULL OR (wait_reason IS NOT NULL AND run_at > now())))::int AS queued,
           count(*) FILTER (WHERE state = 'deferred' AND NOT (warmup_wait_pool IS NOT NULL OR (wait_reason IS NOT NULL AND run_at > now())))::int AS deferred,
           count(*) FILTER (WHERE state = 'leased')::int AS in_flight,
           count(*) FILTER (WHERE state IN ('queued', 'deferred') AND (warmup_wait_pool IS NOT NULL OR (wait_reason IS NOT NULL AND run_at > now())))::int AS waiting,
           max(COALESCE(wait_reason, last_response)) FILTER (WHERE state IN ('queued', 'deferred') AND (warmup_wait_pool IS NOT NULL OR (wait_reason IS NOT NULL AND run_at > now())))
             AS wait_reason,
           min(run_at) FILTER (WHERE state IN ('queued', 'deferred') AND (warmup_wait_pool IS NOT NULL OR (wait_reason IS NOT NULL AND run_at > now()))) AS wait_until,
           min(created_at) AS oldest_at,
           min(run_at) FILTER (WHERE state = 'deferred' AND NOT (warmup_wait_pool IS NOT NULL OR (wait_reason IS NOT NULL AND run_at > now()))) AS next_try_at,
           max(last_attempt_at) AS last_attempt_at,
           substr(max(to_char(last_attempt_at AT TIME ZONE 'UTC', 'YYYYMMDDHH24MISSUS') || last_response), 21)
             AS last_response,
           min(run_at) FILTER (WHERE state IN ('queued', 'deferred') AND run_at <= now()) AS oldest_due_at
      FROM mta_spool
     WHERE $1::text IS NULL OR domain = $1
     GROUP BY domain
  ), held AS (
    SELECT domain, held_at, held_by, hold_reason FROM mta_destinations
     WHERE held_at IS NOT NULL AND ($1::text IS NULL OR domain = $1)
  ), listed AS (
    SELECT COALESCE(s.domain, h.domain) AS domain,
           COALESCE(s.queued, 0) AS queued, COALESCE(s.deferred, 0) AS deferred, COALESCE(s.in_flight, 0) AS in_flight,
           COALESCE(s.waiting, 0) AS waiting, s.wait_reason, s.wait_until,
           s.oldest_at, s.next_try_at, s.last_attempt_at, s.last_response,
           COALESCE(floor(extract(epoch FROM now() - s.oldest_due_at) * 1000), 0)::bigint AS oldest_waiting_ms,
           h.held_at, h.held_by::text AS held_by, h.hold_reason,
           count(*) OVER ()::int AS total
      FROM spool s FULL JOIN held h ON h.domain = s.domain
     ORDER BY s.oldest_at NULLS LAST, 1
     LIMIT $2 OFFSET $3
  )
  SELECT l.*, a.email AS held_by_email
    FROM listed l LEFT JOIN admins a ON a.id = l.held_by::uuid
   ORDER BY l.oldest_at NULLS LAST, l.domain`,
);

// The whole outbound queue in one row, for /health/queues: held destinations do not count as waiting.
const DESTINATION_TOTALS = declare(
  'mta_destinations_totals',
  `
  SELECT count(*) FILTER (WHERE s.state = 'queued')::int AS queued,
         count(*) FILTER (WHERE s.state = 'deferred')::int AS deferred,
         count(*) FILTER (WHERE s.state = 'leased')::int AS in_flight,
         (SELECT count(*) FROM mta_destinations WHERE held_at IS NOT NULL)::int AS held_destinations,
         COALESCE(floor(extract(epoch FROM now() - min(s.run_at) FILTER (
           WHERE s.state IN ('queued', 'deferred') AND s.run_at <= now()
             AND NOT EXISTS (SELECT 1 FROM mta_destinations h WHERE h.domain = s.domain AND h.held_at IS NOT NULL)
         )) * 1000), 0)::bigint AS oldest_waiting_ms
    FROM mta_spool s`,
);

/** `retry`: the domain's waiting rows become due now, and the MTA loop is woken (at commit). */
export const RETRY_DESTINATION = declare(
  'mta_destinations_retry',
  `
  WITH due AS (
    UPDATE mta_spool SET run_at = now()
     WHERE domain = $1 AND state IN ('queued', 'deferred') AND run_at > now()
    RETURNING 1
  )
  SELECT (SELECT count(*) FROM due)::int AS made_due, pg_notify('${SPOOL_CHANNEL}', '')::text AS notified`,
);

/** `hold`: a row per domain; holding a held domain again keeps when it was first held, takes the new reason. */
export const HOLD_DESTINATION = declare(
  'mta_destinations_hold',
  `
  INSERT INTO mta_destinations AS d (domain, held_at, held_by, hold_reason, updated_at)
  VALUES ($1, now(), $2, $3, now())
  ON CONFLICT (domain) DO UPDATE
     SET held_at = COALESCE(d.held_at, now()), held_by = EXCLUDED.held_by, hold_reason = EXCLUDED.hold_reason,
         updated_at = now()
  RETURNING domain`,
);

/**
 * `release`: clears the hold, makes the domain's rows due now (a release is a request to deliver, as
 * Postfix's `postsuper -H` followed by a flush) and wakes the loop. Answers 0 released when it was not held.
 */
export const RELEASE_DESTINATION = declare(
  'mta_destinations_release',
  `
  WITH released AS (
    UPDATE mta_destinations SET held_at = NULL, held_by = NULL, hold_reason = NULL, updated_at = now()
     WHERE domain = $1 AND held_at IS NOT NULL
    RETURNING domain
  ), due AS (
    UPDATE mta_spool SET run_at = now()
     WHERE domain IN (SELECT domain FROM released) AND state IN ('queued', 'deferred') AND run_at > now()
    RETURNING 1
  )
  SELECT (SELECT count(*) FROM released)::int AS released, (SELECT count(*) FROM due)::int AS made_due,
         pg_notify('${SPOOL_CHANNEL}', '')::text AS notified`,
);

interface RawDestination {
  domain: string;
  queued: number;
  deferred: number;
  in_flight: number;
  waiting: number;
  wait_reason: string | null;
  wait_until: Date | null;
  oldest_at: Date | null;
  next_try_at: Date | null;
  last_attempt_at: Date | null;
  last_response: string | null;
  oldest_waiting_ms: string;
  held_at: Date | null;
  held_by: string | null;
  held_by_email: string | null;
  hold_reason: string | null;
  total: number;
}

/** A page of destinations (every domain with mail spooled or a hold), oldest first; `domain` narrows it to one. */
export async function listDestinations(
  sql: Sql,
  options: { domain: string | null; limit: number; offset: number },
): Promise<{ rows: DestinationRow[]; total: number }> {
  const raw = await sql.rows<RawDestination>(LIST_DESTINATIONS, [options.domain, options.limit, options.offset]);
  return {
    total: raw[0]?.total ?? 0,
    rows: raw.map((row) => ({
      domain: row.domain,
      queued: row.queued,
      deferred: row.deferred,
      inFlight: row.in_flight,
      waiting: row.waiting,
      waitReason: row.wait_reason,
      waitUntil: row.wait_until,
      oldestAt: row.oldest_at,
      nextTryAt: row.next_try_at,
      lastAttemptAt: row.last_attempt_at,
      lastResponse: row.last_response,
      oldestWaitingAgeMs: Math.max(0, Number(row.oldest_waiting_ms)),
      heldAt: row.held_at,
      heldBy: row.held_by,
      heldByEmail: row.held_by_email,
      holdReason: row.hold_reason,
    })),
  };
}

export async function destinationTotals(sql: Sql): Promise<DestinationTotals> {
  const [row] = await sql.rows<{
    queued: number;
    deferred: number;
    in_flight: number;
    held_destinations: number;
    oldest_waiting_ms: string;
  }>(DESTINATION_TOTALS, []);
  return {
    queued: row.queued,
    deferred: row.deferred,
    inFlight: row.in_flight,
    heldDestinations: row.held_destinations,
    oldestWaitingAgeMs: Math.max(0, Number(row.oldest_waiting_ms)),
  };
}
