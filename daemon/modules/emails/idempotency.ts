// Idempotency-Key of the send routes (spec §4): the first answer for a key is stored for 24 hours
// and replayed for the same body; another body with the key is a 409. The key row is written in
// the transaction that writes the sends, so a refused send leaves no key behind. Plain `pg`
// statements (daemon/db/sql.ts), like the rest of the accept path.
import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { Sequelize } from 'sequelize';
import { ConflictError } from '../../errors.ts';
import { declare, type Sql } from '../../db/sql.ts';
import type { BatchAccepted, SendAccepted } from '../../../shared/schemas/emails.ts';

export const IDEMPOTENCY_TTL_HOURS = 24;
const IDEMPOTENCY_WAIT_MS = 10_000;

export type AnswerBody = SendAccepted | BatchAccepted;

/** A stored first answer: the HTTP status it had (200 or 202) and its body. */
export interface StoredAnswer {
  statusCode: number;
  body: AnswerBody;
}

const STORED = declare(
  'idempotency.stored',
  `
  SELECT body_hash, status_code, response FROM idempotency_keys
   WHERE tenant_id = $1 AND key = $2 AND created_at > now() - make_interval(hours => ${IDEMPOTENCY_TTL_HOURS})`,
);

// A key older than the TTL is taken over; a live one is left alone (RETURNING nothing).
const CLAIM = declare(
  'idempotency.claim',
  `
  INSERT INTO idempotency_keys (tenant_id, key, body_hash, status_code, response)
  VALUES ($1, $2, $3, $4, $5::jsonb)
  ON CONFLICT (tenant_id, key) DO UPDATE SET body_hash = EXCLUDED.body_hash, status_code = EXCLUDED.status_code,
    response = EXCLUDED.response, created_at = now()
    WHERE idempotency_keys.created_at <= now() - make_interval(hours => ${IDEMPOTENCY_TTL_HOURS})
  RETURNING key`,
);

const COMPLETE = declare(
  'idempotency.complete',
  `UPDATE idempotency_keys SET status_code = $3, response = $4::jsonb WHERE tenant_id = $1 AND key = $2`,
);

/** What a key is bound to: a hash of the request (its path and body). */
export function fingerprintHash(value: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(value ?? null))
    .digest('hex');
}

/** The first answer for this key, 409 for another body; null when the key is new. Waits for a sync first request. */
export async function replayIfKnown(
  sql: Sql,
  tenantId: string,
  key: string,
  hash: string,
): Promise<StoredAnswer | null> {
  const deadline = Date.now() + IDEMPOTENCY_WAIT_MS;
  for (;;) {
    const [row] = await sql.rows<{ body_hash: string; status_code: number | null; response: AnswerBody | null }>(
      STORED,
      [tenantId, key],
    );
    if (!row) return null;
    if (row.body_hash !== hash) {
      throw new ConflictError(
        'This Idempotency-Key was already used with a different request body; use a new key for a new send.',
        'IDEMPOTENCY_KEY_REUSED',
      );
    }
    if (row.response && row.status_code) return { statusCode: row.status_code, body: row.response };
    // The first request (a sync send) is still delivering: wait for its answer.
    if (Date.now() > deadline)
      throw new ConflictError(
        'A request with this Idempotency-Key is still being processed; retry shortly.',
        'IDEMPOTENCY_KEY_IN_USE',
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Writes the key row inside the sends' transaction (`client`), with the answer, or without one for a
 * sync send (completed later). False when another request holds the key (it committed first).
 */
export async function claimKey(
  sql: Sql,
  client: pg.ClientBase,
  tenantId: string,
  key: string,
  hash: string,
  answer: StoredAnswer | null,
): Promise<boolean> {
  const rows = await sql.rows(
    CLAIM,
    [tenantId, key, hash, answer?.statusCode ?? null, answer ? JSON.stringify(answer.body) : null],
    client,
  );
  return rows.length > 0;
}

/** Stores the answer of a sync send under its key. */
export async function completeKey(sql: Sql, tenantId: string, key: string, answer: StoredAnswer): Promise<void> {
  await sql.count(COMPLETE, [tenantId, key, answer.statusCode, JSON.stringify(answer.body)]);
}

/** Deletes idempotency answers older than 24 hours (maintenance). */
export async function pruneIdempotencyKeys(sequelize: Sequelize): Promise<void> {
  await sequelize.query(`DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => :ttl)`, {
    replacements: { ttl: IDEMPOTENCY_TTL_HOURS },
  });
}
