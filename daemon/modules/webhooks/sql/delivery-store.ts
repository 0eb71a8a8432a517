// The SQL of webhook delivery, on plain pg (daemon/db/sql.ts): claim due deliveries in batches with
// SKIP LOCKED and a lease, keep the leases alive, give them back, and settle a batch of outcomes —
// deliveries and their endpoints' failure streaks — in one statement.
//
// A held delivery's due_at is its lease's end: a worker that dies leaves deliveries that simply
// become due again when the lease runs out, and locked_by keeps a late outcome of the dead worker
// from settling a delivery someone else has taken since.
//
// Held deliveries are found by their whole primary key (id, created_at: the table is partitioned by
// month), never by id alone. By id alone, on a partition without statistics yet (a new month, or
// the first minute of a burst) the planner took the partial due index for `status = 'pending'` and
// read all of it for every row: a settle of 400 outcomes took 670 ms with 100,000 entries in it.
import { declare, type Sql } from '../../../db/sql.ts';
import type { ClaimedDelivery, DeliveryOutcome } from '../attempt.ts';

/** After this many failed attempts in a row (across deliveries) the endpoint is switched off. */
export const AUTO_DISABLE_AFTER_FAILURES = 20;

interface RawClaimed {
  id: string;
  created_at: string;
  tenant_id: string;
  endpoint_id: string;
  event_type: string;
  body: string;
  attempt: number;
  max_attempts: number;
  url: string;
  secret_encrypted: string;
  enabled: boolean;
}

const CLAIMED_COLUMNS = `d.id, d.created_at::text AS created_at, d.tenant_id, d.endpoint_id, d.event_type, d.payload::text AS body, d.attempt, d.max_attempts,
                         e.url, e.secret_encrypted, e.enabled`;

// Each endpoint gets at most its own room: $5/$6 give the room of the endpoints this worker has a
// lane for (full ones are in $3 and left out of the scan), $7 the room of any other endpoint. The
// window runs over the first $8 due rows only, so a claim costs the same whatever the backlog; the
// rows are locked only in `picked`, after the per-endpoint cut (FOR UPDATE cannot sit beside a
// window function). The lock re-checks that each row is still pending with the due time it was seen
// with: every change of a delivery's state (claim, lease extension, release, settle) moves due_at,
// so a row another worker took or settled meanwhile is skipped. Matching due_at exactly (not
// `due_at <= now()` again) also keeps the planner from answering each candidate with a walk of the
// whole due index, which it did on a partition without statistics yet (a new month, a fresh burst):
// 200 candidates × the backlog, 100–350 ms per claim.
const CLAIM = declare(
  'webhook_deliveries_claim',
  `
  WITH candidates AS (
    SELECT c.id, c.created_at, c.due_at, row_number() OVER (PARTITION BY c.endpoint_id ORDER BY c.due_at) AS nth,
           COALESCE(r.room, $7) AS room
      FROM (SELECT d.id, d.created_at, d.endpoint_id, d.due_at FROM webhook_deliveries d
             WHERE d.status = 'pending' AND d.due_at <= now() AND NOT (d.endpoint_id = ANY($3::uuid[]))
               AND NOT EXISTS (SELECT 1 FROM webhook_endpoints p WHERE p.id = d.endpoint_id AND p.paused_until > now())
             ORDER BY d.due_at
             LIMIT $8) c
      LEFT JOIN unnest($5::uuid[], $6::int[]) AS r(endpoint_id, room) ON r.endpoint_id = c.endpoint_id
  ), picked AS (
    SELECT d.id, d.created_at FROM webhook_deliveries d JOIN candidates c ON c.id = d.id AND c.created_at = d.created_at
     WHERE c.nth <= c.room AND d.status = 'pending' AND d.due_at = c.due_at
     ORDER BY c.due_at
     LIMIT $2
     FOR UPDATE OF d SKIP LOCKED)
  UPDATE webhook_deliveries d
     SET locked_by = $1, locked_until = now() + $4 * interval '1 millisecond', due_at = now() + $4 * interval '1 millisecond'
    FROM picked, webhook_endpoints e
   WHERE d.id = picked.id AND d.created_at = picked.created_at AND e.id = d.endpoint_id
  RETURNING ${CLAIMED_COLUMNS}`,
);

// The API's one-off test delivery (due_at NULL: no worker claims it) taken by the request itself.
const CLAIM_ONE = declare(
  'webhook_deliveries_claim_one',
  `
  UPDATE webhook_deliveries d
     SET locked_by = $2, locked_until = now() + $3 * interval '1 millisecond'
    FROM webhook_endpoints e
   WHERE d.id = $1 AND e.id = d.endpoint_id AND d.status = 'pending'
     AND (d.locked_by IS NULL OR d.locked_until <= now())
  RETURNING ${CLAIMED_COLUMNS}`,
);

const EXTEND = declare(
  'webhook_deliveries_extend',
  `
  UPDATE webhook_deliveries d
     SET locked_until = now() + $3 * interval '1 millisecond', due_at = now() + $3 * interval '1 millisecond'
    FROM unnest($1::uuid[], $4::timestamptz[]) AS k(id, created_at)
   WHERE d.id = k.id AND d.created_at = k.created_at AND d.locked_by = $2 AND d.status = 'pending'
  RETURNING d.id`,
);

const RELEASE = declare(
  'webhook_deliveries_release',
  `
  UPDATE webhook_deliveries d
     SET locked_by = NULL, locked_until = NULL, due_at = GREATEST(now(), COALESCE($3::timestamptz, now()))
    FROM unnest($1::uuid[], $4::timestamptz[]) AS k(id, created_at)
   WHERE d.id = k.id AND d.created_at = k.created_at AND d.locked_by = $2 AND d.status = 'pending'`,
);

// One statement per batch of outcomes. The endpoint's streak is summarised per batch in the order
// the answers came: failures before the first success (added to the stored streak), the longest
// run between two successes, and the failures after the last success (the new streak).
const SETTLE = declare(
  'webhook_deliveries_settle',
  `
  WITH o AS (
    SELECT * FROM unnest($1::uuid[], $18::timestamptz[], $2::int[], $3::text[], $4::int[], $5::text[], $6::text[], $7::timestamptz[], $8::bool[])
      AS o(id, created_at, attempt, status, status_code, response_body, error, due_at, attempted)
  ), settled AS (
    UPDATE webhook_deliveries d
       SET attempt = o.attempt, status = o.status, error = o.error, due_at = o.due_at, next_attempt_at = o.due_at,
           status_code = CASE WHEN o.attempted THEN o.status_code ELSE d.status_code END,
           response_body = CASE WHEN o.attempted THEN o.response_body ELSE d.response_body END,
           delivered_at = CASE WHEN o.attempted THEN now() ELSE d.delivered_at END,
           locked_by = NULL, locked_until = NULL, updated_at = now()
      FROM o
     WHERE d.id = o.id AND d.created_at = o.created_at AND d.locked_by = $9 AND d.status = 'pending'
    RETURNING d.id
  ), e AS (
    SELECT e.*, (e.gone OR e.max_inner >= $17) AS must_disable
      FROM unnest($10::uuid[], $11::bool[], $12::int[], $13::int[], $14::int[], $15::bool[], $16::timestamptz[])
        AS e(id, had_success, prefix, suffix, max_inner, gone, paused_until)
  ), touched AS (
    UPDATE webhook_endpoints w
       SET consecutive_failures = CASE WHEN e.had_success THEN e.suffix ELSE w.consecutive_failures + e.prefix END,
           enabled = w.enabled AND NOT (e.must_disable OR w.consecutive_failures + e.prefix >= $17),
           disabled_reason = CASE WHEN w.enabled AND (e.must_disable OR w.consecutive_failures + e.prefix >= $17)
                                  THEN (CASE WHEN e.gone THEN 'gone' ELSE 'failing' END) ELSE w.disabled_reason END,
           disabled_at = CASE WHEN w.enabled AND (e.must_disable OR w.consecutive_failures + e.prefix >= $17) THEN now() ELSE w.disabled_at END,
           paused_until = CASE WHEN e.paused_until IS NULL THEN w.paused_until ELSE GREATEST(w.paused_until, e.paused_until) END,
           updated_at = now()
      FROM e
     WHERE w.id = e.id
       AND NOT (e.had_success AND e.suffix = 0 AND w.consecutive_failures = 0 AND e.paused_until IS NULL)
    RETURNING w.id, (NOT w.enabled AND w.disabled_at = now()) AS disabled_now
  )
  SELECT (SELECT count(*) FROM settled)::int AS settled,
         COALESCE((SELECT array_agg(id::text) FROM touched WHERE disabled_now), '{}') AS disabled`,
);

function toClaimed(row: RawClaimed): ClaimedDelivery {
  return {
    id: row.id,
    createdAt: row.created_at,
    tenantId: row.tenant_id,
    endpointId: row.endpoint_id,
    eventType: row.event_type,
    body: row.body,
    attempt: row.attempt,
    maxAttempts: row.max_attempts,
    url: row.url,
    secretEncrypted: row.secret_encrypted,
    enabled: row.enabled,
  };
}

/** How many deliveries each endpoint may still take in one claim. */
export interface ClaimRooms {
  /** Endpoints that take nothing (their lane is full or paused). */
  full?: string[];
  /** Endpoints with room, and how much. */
  rooms?: Array<[endpointId: string, room: number]>;
  /** The room of every other endpoint (no lane yet); unlimited when absent. */
  otherRoom?: number;
}

/** Rows of the due backlog one claim looks at, per delivery it may take. */
const CLAIM_SCAN_FACTOR = 4;

/** Claims up to `limit` due deliveries, none of a full endpoint, at most its room of any other. */
export async function claimDeliveries(
  sql: Sql,
  workerId: string,
  limit: number,
  leaseMs: number,
  rooms: ClaimRooms = {},
): Promise<ClaimedDelivery[]> {
  const withRoom = rooms.rooms ?? [];
  const params = [
    workerId,
    limit,
    rooms.full ?? [],
    leaseMs,
    withRoom.map(([id]) => id),
    withRoom.map(([, room]) => room),
    rooms.otherRoom ?? limit,
    limit * CLAIM_SCAN_FACTOR,
  ];
  return (await sql.rows<RawClaimed>(CLAIM, params)).map(toClaimed);
}

export async function claimDelivery(
  sql: Sql,
  deliveryId: string,
  workerId: string,
  leaseMs: number,
): Promise<ClaimedDelivery | null> {
  const [row] = await sql.rows<RawClaimed>(CLAIM_ONE, [deliveryId, workerId, leaseMs]);
  return row ? toClaimed(row) : null;
}

/** A held delivery's primary key. */
export interface DeliveryKey {
  id: string;
  createdAt: string;
}

/** Answers the ids still held. */
export async function extendDeliveryLeases(
  sql: Sql,
  keys: DeliveryKey[],
  workerId: string,
  leaseMs: number,
): Promise<string[]> {
  if (keys.length === 0) return [];
  return (
    await sql.rows<{ id: string }>(EXTEND, [keys.map((k) => k.id), workerId, leaseMs, keys.map((k) => k.createdAt)])
  ).map((row) => row.id);
}

/** Gives held deliveries back without an attempt, due at once or at `dueAt`. */
export async function releaseDeliveries(
  sql: Sql,
  keys: DeliveryKey[],
  workerId: string,
  dueAt: Date | null = null,
): Promise<number> {
  if (keys.length === 0) return 0;
  return sql.count(RELEASE, [keys.map((k) => k.id), workerId, dueAt, keys.map((k) => k.createdAt)]);
}

interface EndpointSummary {
  hadSuccess: boolean;
  prefix: number;
  suffix: number;
  maxInner: number;
  gone: boolean;
  pausedUntil: Date | null;
}

function summariseEndpoints(outcomes: DeliveryOutcome[]): Map<string, EndpointSummary> {
  const summaries = new Map<string, EndpointSummary>();
  for (const outcome of outcomes) {
    if (outcome.endpointEffect === null) continue;
    let s = summaries.get(outcome.endpointId);
    if (!s)
      summaries.set(
        outcome.endpointId,
        (s = { hadSuccess: false, prefix: 0, suffix: 0, maxInner: 0, gone: false, pausedUntil: null }),
      );
    if (outcome.endpointEffect === 'success') {
      s.hadSuccess = true;
      s.suffix = 0;
    } else {
      if (s.hadSuccess) s.maxInner = Math.max(s.maxInner, ++s.suffix);
      else s.prefix += 1;
      if (outcome.endpointEffect === 'gone') s.gone = true;
    }
    if (outcome.pauseUntil !== null && (s.pausedUntil === null || outcome.pauseUntil > s.pausedUntil))
      s.pausedUntil = outcome.pauseUntil;
  }
  return summaries;
}

/**
 * Settles a batch of outcomes of deliveries `workerId` holds (others are left alone: their lease was
 * lost). Answers how many were settled and the endpoints this batch switched off.
 */
export async function settleDeliveries(
  sql: Sql,
  workerId: string,
  outcomes: DeliveryOutcome[],
): Promise<{ settled: number; disabledEndpoints: string[] }> {
  const endpoints = [...summariseEndpoints(outcomes)].sort(([a], [b]) => (a < b ? -1 : 1));
  const values = [
    outcomes.map((o) => o.deliveryId),
    outcomes.map((o) => o.attempt),
    outcomes.map((o) => o.status),
    outcomes.map((o) => o.statusCode),
    outcomes.map((o) => o.responseBody),
    outcomes.map((o) => o.error),
    outcomes.map((o) => o.dueAt),
    outcomes.map((o) => o.attempted),
    workerId,
    endpoints.map(([id]) => id),
    endpoints.map(([, s]) => s.hadSuccess),
    endpoints.map(([, s]) => s.prefix),
    endpoints.map(([, s]) => s.suffix),
    endpoints.map(([, s]) => s.maxInner),
    endpoints.map(([, s]) => s.gone),
    endpoints.map(([, s]) => s.pausedUntil),
    AUTO_DISABLE_AFTER_FAILURES,
    outcomes.map((o) => o.deliveryCreatedAt),
  ];
  for (let tries = 1; ; tries++) {
    try {
      const [row] = await sql.rows<{ settled: number; disabled: string[] }>(SETTLE, values);
      return { settled: row.settled, disabledEndpoints: row.disabled };
    } catch (error) {
      // Two workers settling the same endpoints in another order: the statement is atomic, so again.
      if ((error as { code?: string }).code !== '40P01' || tries >= 3) throw error;
    }
  }
}
