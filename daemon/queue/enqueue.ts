// Putting work in and taking not-yet-started work out. Each function is one SQL statement and takes
// the caller's transaction, so a job commits (or rolls back) with the row that asked for it.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { QueueName } from '../../shared/constants.ts';
import { queueChannel } from './channel.ts';
import type { EnqueueJobOptions } from './types.ts';

export const DEFAULT_MAX_ATTEMPTS = 5;

/**
 * Adds a job and wakes the queue's workers. The NOTIFY payload is the queue name, so Postgres folds
 * the notifications of one transaction into one per queue however many jobs it enqueues.
 * With a `key` that already waits in the queue, the existing job is kept and its id returned.
 */
export async function enqueueJob(sequelize: Sequelize, options: EnqueueJobOptions, transaction?: Transaction): Promise<string> {
  const replacements = {
    queue: options.queue,
    tenantId: options.tenantId ?? null,
    payload: JSON.stringify(options.payload),
    runAt: options.runAt ?? null,
    maxAttempts: options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    key: options.key ?? null,
    channel: queueChannel(options.queue),
  };
  const statement = () => sequelize.query<{ id: string }>(
    `WITH inserted AS (
       INSERT INTO jobs (queue, tenant_id, payload, run_at, max_attempts, key)
       VALUES (:queue, :tenantId, CAST(:payload AS jsonb), COALESCE(CAST(:runAt AS timestamptz), now()), :maxAttempts, :key)
       ON CONFLICT (queue, key) WHERE key IS NOT NULL DO NOTHING
       RETURNING id, run_at
     )
     SELECT id::text AS id,
            CASE WHEN run_at <= now() THEN pg_notify(:channel, :queue) END AS notified
       FROM inserted
     UNION ALL
     SELECT id::text, NULL FROM jobs
      WHERE queue = :queue AND key = :key AND NOT EXISTS (SELECT 1 FROM inserted)`,
    { replacements, type: QueryTypes.SELECT, transaction },
  );
  // A same-key job committed by another transaction while ours waited on the unique index is not
  // in this statement's snapshot; the next statement sees it.
  let rows = await statement();
  if (!rows[0] && options.key && !transaction) rows = await statement();
  if (!rows[0]) throw new Error(`enqueueJob: job with key ${options.key} in ${options.queue} vanished while enqueueing`);
  return rows[0].id;
}

/**
 * Cancels the waiting job with this key (a scheduled send that was cancelled). Answers false when
 * there is none, or when a worker has already taken it (it can no longer be stopped).
 */
export async function removeJob(sequelize: Sequelize, queue: QueueName, key: string, transaction?: Transaction): Promise<boolean> {
  const rows = await sequelize.query(
    `DELETE FROM jobs WHERE queue = :queue AND key = :key AND locked_until IS NULL RETURNING id`,
    { replacements: { queue, key }, type: QueryTypes.SELECT, transaction },
  );
  return rows.length > 0;
}
