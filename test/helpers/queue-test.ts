// Shared by the queue test files: the run-recording table, bulk enqueueing and waiting.
import { fileURLToPath } from 'node:url';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { QueueName } from '../../shared/constants.ts';
import { queueChannel } from '../../daemon/queue/channel.ts';

export const TEST_WORKER_MODULE = fileURLToPath(new URL('./queue-test-worker.ts', import.meta.url));

export async function createRunTable(sequelize: Sequelize): Promise<void> {
  await sequelize.query(
    `CREATE TABLE IF NOT EXISTS queue_test_runs (n integer NOT NULL, worker text NOT NULL, attempts integer NOT NULL, at timestamptz NOT NULL DEFAULT now())`,
  );
}

/** Enqueues jobs n = from..to-1 in one statement (as enqueueJob would, one NOTIFY). */
export async function enqueueRange(
  sequelize: Sequelize,
  queue: string,
  from: number,
  to: number,
  extra: Record<string, unknown> = {},
): Promise<void> {
  await sequelize.query(
    `INSERT INTO jobs (queue, payload)
       SELECT :queue, jsonb_build_object('n', n) || CAST(:extra AS jsonb) FROM generate_series(:from, :to - 1) AS n;
     SELECT pg_notify(:channel, :queue)`,
    { replacements: { queue, from, to, extra: JSON.stringify(extra), channel: queueChannel(queue as QueueName) } },
  );
}

export async function count(
  sequelize: Sequelize,
  sql: string,
  replacements: Record<string, unknown> = {},
): Promise<number> {
  const rows = await sequelize.query<{ count: number }>(sql, { replacements, type: QueryTypes.SELECT });
  return Number(rows[0]?.count ?? 0);
}
