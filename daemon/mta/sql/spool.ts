// The spool's statements (table mta_spool, migration 0330; docs/mta.md): the per-destination loop's
// claim, lease extension, give-back and batched outcome write (the transport target's insert is
// spool-insert.ts). Declared pg statements (daemon/db/sql.ts); the batch ones take parallel arrays
// through unnest.
import { declare, type BoundStatement, type Sql } from '../../db/sql.ts';
import { createGroupCommit, type GroupCommit } from '../../db/group-commit.ts';
import type { SpooledMessageSource } from '../spooled-messages.ts';
import type { MailStream } from '../../../shared/schemas/ip-pools.ts';

/** The NOTIFY channel the transport target wakes the MTA loop on. */
export const SPOOL_CHANNEL = 'svc_mta_spool';

/**
 * One recipient of a spool row and where it stands. `answered`: the destination answered DATA with a
 * 2xx, marked at once (SpoolAnsweredMarks), while the outcome is not recorded yet; a row reclaimed after
 * a crash settles such recipients as delivered from the kept response instead of sending again.
 */
export interface SpoolRecipient {
  address: string;
  state: 'pending' | 'answered' | 'delivered' | 'bounced' | 'deferred';
  response: string | null;
}

/** Transactional mail, or a campaign's sends: IP pools can be assigned per stream. */
export type SpoolStream = MailStream;

export interface SpooledRow {
  id: string;
  /** Null for system mail: nothing to record outcomes in but the spool. */
  tenantId: string | null;
  emailId: string | null;
  projectId: string | null;
  stream: SpoolStream;
  domain: string;
  recipients: SpoolRecipient[];
  envelopeFrom: string;
  message: Buffer;
  /** Attempts made before this claim. */
  attempts: number;
  expiresAt: Date;
  dataSentAt: Date | null;
  /** Why the row last waited without an attempt (a wait of ours, migration 0456); null after an attempt. */
  waitReason?: string | null;
}

// Due rows, and rows whose lease ran out (their worker died), except those of full lanes and of
// destinations an operator holds (mta_destinations, `svc queue hold`), each destination at most its
// lane's room: $5/$6 give the room of the domains this worker has a lane for (full ones are in $3),
// $7 that of any other. Without the cut one claim took every due row of a destination whatever its
// room, and a worker node that joined found a released backlog already leased by the others (issue 51
// §4, CI). The window runs over the first $8 due rows only (so a claim costs the same whatever the
// backlog), each half walking its own partial index in run_at order; the rows are locked only in
// `picked`, after the cut (FOR UPDATE cannot sit beside a window function), which re-checks that each
// is still due as it was seen: a row another worker took meanwhile is skipped.
const CLAIM_SPOOL = declare(
  'mta_spool_claim',
  `
  WITH due AS (
    (SELECT id, domain, run_at, state FROM mta_spool
      WHERE state IN ('queued', 'deferred') AND run_at <= now() AND NOT (domain = ANY($3::text[]))
      ORDER BY run_at LIMIT $8)
    UNION ALL
    (SELECT id, domain, run_at, state FROM mta_spool
      WHERE state = 'leased' AND lease_until < now() AND NOT (domain = ANY($3::text[]))
      ORDER BY lease_until LIMIT $8)
  ), candidates AS (
    SELECT c.id, c.run_at, c.state, row_number() OVER (PARTITION BY c.domain ORDER BY c.run_at) AS nth,
           COALESCE(r.room, $7) AS room
      FROM (SELECT * FROM due
             WHERE NOT EXISTS (SELECT 1 FROM mta_destinations h WHERE h.domain = due.domain AND h.held_at IS NOT NULL)
             ORDER BY run_at LIMIT $8) c
      LEFT JOIN unnest($5::text[], $6::int[]) AS r(domain, room) ON r.domain = c.domain
  ), picked AS (
    SELECT s.id FROM mta_spool s JOIN candidates c ON c.id = s.id
     WHERE c.nth <= c.room AND s.state = c.state AND s.run_at = c.run_at
       AND ((s.state IN ('queued', 'deferred') AND s.run_at <= now()) OR (s.state = 'leased' AND s.lease_until < now()))
     ORDER BY c.run_at
     LIMIT $4
     FOR UPDATE OF s SKIP LOCKED)
  UPDATE mta_spool s
     SET state = 'leased', lease_owner = $1, lease_until = now() + $2 * interval '1 millisecond'
    FROM picked
   WHERE s.id = picked.id
  RETURNING s.id::text AS id, s.tenant_id::text AS tenant_id, s.email_id::text AS email_id, s.domain,
            s.project_id::text AS project_id, s.stream, s.recipients, s.envelope_from, s.attempts, s.expires_at, s.data_sent_at,
            s.wait_reason`,
);

/** Rows of the due backlog one claim looks at, per row it may take. */
const CLAIM_SCAN_FACTOR = 4;

/** How many rows each destination may still take in one claim (the engine's LaneRooms). */
export interface SpoolClaimRooms {
  /** Destinations that take nothing now (their lane is full or suspended). */
  full: string[];
  /** Destinations with a lane and room, and how much. */
  rooms: Array<[domain: string, room: number]>;
  /** The room of a destination this worker has no lane for. */
  otherRoom: number;
}

// The messages of claimed rows this process was not handed in memory, as base64 (node-postgres reads a
// bytea as hex text, which took PostgreSQL twice the time to write: mta/spooled-messages.ts), in pieces
// of READ_PIECE_BYTES, a row each, in order. node-postgres decodes each value into one JS string, and a
// string past V8's largest regular heap object (128 KiB) is allocated in the large-object space: 1.1 ms
// of CPU for the 133 KB of a 100 KB message's base64 in one string, 0.02 ms in two of ≤ 128,000
// characters (Node 20). It was the largest stage of the worker node's profile in bench:mta's
// submission column, whose messages are spooled by another process (the SMTP edge) and read here.
const READ_PIECE_BYTES = 96_000;
const READ_MESSAGES = declare(
  'mta_spool_read_messages',
  `SELECT s.id::text AS id, encode(substring(s.message FROM piece.at FOR ${READ_PIECE_BYTES}), 'base64') AS piece
     FROM mta_spool s
     CROSS JOIN LATERAL generate_series(1, greatest(octet_length(s.message), 1), ${READ_PIECE_BYTES}) AS piece(at)
    WHERE s.id = ANY($1::uuid[]) AND s.lease_owner = $2 AND s.state = 'leased'
    ORDER BY s.id, piece.at`,
);

const EXTEND_SPOOL = declare(
  'mta_spool_extend',
  `UPDATE mta_spool SET lease_until = now() + $3 * interval '1 millisecond'
    WHERE id = ANY($1::uuid[]) AND lease_owner = $2 AND state = 'leased' RETURNING id`,
);

const RELEASE_SPOOL = declare(
  'mta_spool_release',
  `UPDATE mta_spool
      SET state = CASE WHEN attempts > 0 THEN 'deferred' ELSE 'queued' END, lease_owner = NULL, lease_until = NULL,
          run_at = COALESCE($3::timestamptz, now())
    WHERE id = ANY($1::uuid[]) AND lease_owner = $2 AND state = 'leased'`,
);

// A transaction's 2xx reply to DATA, in its own statement before the batch commit: the recipients it
// took become `answered` with the reply, so a crash before the commit does not send them again.
// Many rows at once (SpoolAnsweredMarks), locked in id order as EXTEND_SPOOL's index scan takes them, so
// the two never wait on each other crosswise.
const MARK_ANSWERED = declare(
  'mta_spool_mark_answered',
  `
  WITH marks AS (
    SELECT * FROM unnest($1::uuid[], $3::text[]) AS m(id, recipients)
  ), locked AS (
    SELECT s.id FROM mta_spool s JOIN marks m ON m.id = s.id
     WHERE s.lease_owner = $2 AND s.state = 'leased'
     ORDER BY s.id
       FOR UPDATE OF s
  )
  UPDATE mta_spool s SET data_sent_at = now(), recipients = CAST(m.recipients AS jsonb)
    FROM marks m JOIN locked USING (id)
   WHERE s.id = m.id
  RETURNING s.id::text AS id`,
);

// Finished rows are deleted (their outcomes are in the log); deferred ones wait for run_at; released
// ones (shaping held them back: not an attempt) go back to the queue at run_at with their attempts as they
// were. A row `waiting` for warm-up capacity (mta/source-address.ts) waits for run_at too, without counting
// an attempt, and names the pool it waits on ($7) so a change to that pool makes it due at once.
const RECORD_SPOOL = declare(
  'mta_spool_record',
  `
  WITH o AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::text[], $5::text[], $7::uuid[])
      AS o(id, state, run_at, last_response, recipients, wait_pool)
  ), waiting AS (
    UPDATE mta_spool s
       SET state = CASE WHEN s.attempts > 0 THEN 'deferred' ELSE 'queued' END, run_at = o.run_at,
           last_response = o.last_response, warmup_wait_pool = o.wait_pool, wait_reason = o.last_response,
           lease_owner = NULL, lease_until = NULL
      FROM o
     WHERE s.id = o.id AND o.state = 'waiting' AND s.lease_owner = $6
    RETURNING s.id
  ), finished AS (
    DELETE FROM mta_spool s USING o WHERE s.id = o.id AND o.state = 'done' AND s.lease_owner = $6 RETURNING s.id
  ), deferred AS (
    UPDATE mta_spool s
       SET state = 'deferred', attempts = s.attempts + 1, run_at = o.run_at, last_response = o.last_response,
           last_attempt_at = now(),
           recipients = CAST(o.recipients AS jsonb), warmup_wait_pool = NULL, wait_reason = NULL,
           lease_owner = NULL, lease_until = NULL
      FROM o
     WHERE s.id = o.id AND o.state = 'deferred' AND s.lease_owner = $6
    RETURNING s.id
  ), released AS (
    UPDATE mta_spool s
       SET state = CASE WHEN s.attempts > 0 THEN 'deferred' ELSE 'queued' END, run_at = o.run_at,
           wait_reason = COALESCE(o.last_response, s.wait_reason), lease_owner = NULL, lease_until = NULL
      FROM o
     WHERE s.id = o.id AND o.state = 'released' AND s.lease_owner = $6
    RETURNING s.id
  )
  SELECT id::text AS id FROM finished UNION ALL SELECT id::text AS id FROM deferred
  UNION ALL SELECT id::text AS id FROM released
  UNION ALL SELECT id::text AS id FROM waiting`,
);

interface RawSpoolRow {
  id: string;
  tenant_id: string | null;
  email_id: string | null;
  domain: string;
  project_id: string | null;
  stream: SpoolStream;
  recipients: SpoolRecipient[];
  envelope_from: string;
  attempts: number;
  expires_at: Date;
  data_sent_at: Date | null;
  wait_reason: string | null;
}

/**
 * Leases up to `limit` due rows, no destination more than its room, each with its message: from `messages` (handed over in memory) or, for
 * the others, read from the spool in one more statement. A row whose lease was lost in between is left
 * out (its new owner has it).
 */
export async function claimSpool(
  sql: Sql,
  owner: string,
  leaseMs: number,
  rooms: SpoolClaimRooms,
  limit: number,
  messages?: SpooledMessageSource,
): Promise<SpooledRow[]> {
  const rows = await sql.rows<RawSpoolRow>(CLAIM_SPOOL, [
    owner,
    leaseMs,
    rooms.full,
    limit,
    rooms.rooms.map(([domain]) => domain),
    rooms.rooms.map(([, room]) => room),
    rooms.otherRoom,
    limit * CLAIM_SCAN_FACTOR,
  ]);
  const found = new Map<string, Buffer>();
  for (const row of rows) {
    const message = messages?.take(row.id);
    if (message) found.set(row.id, message);
  }
  const missing = rows.filter((row) => !found.has(row.id)).map((row) => row.id);
  if (missing.length > 0) {
    const pieces = new Map<string, Buffer[]>();
    for (const read of await sql.rows<{ id: string; piece: string }>(READ_MESSAGES, [missing, owner])) {
      const piece = Buffer.from(read.piece, 'base64');
      const ofRow = pieces.get(read.id);
      if (ofRow) ofRow.push(piece);
      else pieces.set(read.id, [piece]);
    }
    for (const [id, parts] of pieces) found.set(id, parts.length === 1 ? parts[0] : Buffer.concat(parts));
  }
  return rows.flatMap((row) => {
    const message = found.get(row.id);
    return message ? [{ ...spooledRowOf(row), message }] : [];
  });
}

function spooledRowOf(row: RawSpoolRow): Omit<SpooledRow, 'message'> {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    emailId: row.email_id,
    domain: row.domain,
    projectId: row.project_id,
    stream: row.stream,
    recipients: row.recipients,
    envelopeFrom: row.envelope_from,
    attempts: row.attempts,
    expiresAt: row.expires_at,
    dataSentAt: row.data_sent_at,
    waitReason: row.wait_reason,
  };
}

export async function extendSpoolLeases(sql: Sql, ids: string[], owner: string, leaseMs: number): Promise<number> {
  return (await sql.rows(EXTEND_SPOOL, [ids, owner, leaseMs])).length;
}

export async function releaseSpool(sql: Sql, ids: string[], owner: string, until: Date | null): Promise<void> {
  await sql.count(RELEASE_SPOOL, [ids, owner, until]);
}

/** Marks one statement writes at most. */
const MARKS_PER_STATEMENT = 200;

/**
 * Marks leased rows' recipients as they stand after a 2xx reply to DATA (`answered` ones included), for
 * all the connections of one MTA thread, as a group commit (db/group-commit.ts): a mark made while a
 * statement of marks is on its way goes with the next one. Alone, a mark is written at once; under load,
 * one statement (and one WAL flush) marks every row whose DATA was answered meanwhile, where a statement
 * per message was one round trip and one flush each (bench:mta: 8,400 of them for 8,400 messages).
 */
export class SpoolAnsweredMarks {
  private readonly marks: GroupCommit<{ id: string; recipients: string }, boolean>;

  constructor(sql: Sql, owner: string) {
    this.marks = createGroupCommit({
      maxSize: MARKS_PER_STATEMENT,
      write: async (marks) => {
        const rows = await sql.rows<{ id: string }>(MARK_ANSWERED, [
          marks.map((m) => m.id),
          owner,
          marks.map((m) => m.recipients),
        ]);
        const marked = new Set(rows.map((row) => row.id));
        return marks.map((m) => ({ status: 'fulfilled', value: marked.has(m.id) }));
      },
    });
  }

  /** Answers whether the row was still this owner's (else nothing was written). */
  mark(id: string, recipients: SpoolRecipient[]): Promise<boolean> {
    return this.marks.submit({ id, recipients: JSON.stringify(recipients) });
  }
}

/**
 * What one attempt of a row changes: deleted when finished, else deferred to `runAt`; `released`: not
 * attempted (shaping), back in the queue at `runAt` without counting an attempt; `waiting`: not tried (no
 * source address of its pool has warm-up room), due again at `runAt`, no attempt counted.
 */
export interface SpoolOutcome {
  id: string;
  state: 'done' | 'deferred' | 'released' | 'waiting';
  runAt: Date | null;
  lastResponse: string | null;
  recipients: SpoolRecipient[];
  /** For `waiting`: the pool it waits on. */
  waitPool?: string | null;
}

// The rows of a batch this worker still holds, locked in id order (as MARK_ANSWERED and EXTEND_SPOOL
// take them) for the batch's commit: their outcomes are recorded, and then they are (RECORD_SPOOL).
const LOCK_HELD_SPOOL = declare(
  'mta_spool_lock_held',
  `SELECT id::text AS id FROM mta_spool WHERE id = ANY($1::uuid[]) AND lease_owner = $2 AND state = 'leased'
    ORDER BY id FOR UPDATE`,
);

/** LOCK_HELD_SPOOL for rows `ids` and worker `owner`: answers the ids still held. */
export function lockHeldSpoolStatement(ids: string[], owner: string): BoundStatement {
  return { statement: LOCK_HELD_SPOOL, values: [ids, owner] };
}

/**
 * The record statement and its values, to run in the caller's transaction (outcomes go with it). It
 * answers the ids it recorded: rows whose lease another worker took meanwhile are not among them.
 */
export function recordSpoolStatement(outcomes: SpoolOutcome[], owner: string): BoundStatement {
  return {
    statement: RECORD_SPOOL,
    values: [
      outcomes.map((o) => o.id),
      outcomes.map((o) => o.state),
      outcomes.map((o) => o.runAt),
      outcomes.map((o) => o.lastResponse),
      outcomes.map((o) => JSON.stringify(o.recipients)),
      owner,
      outcomes.map((o) => o.waitPool ?? null),
    ],
  };
}
