// Putting work in and taking not-yet-started work out (the statements: ./sql/enqueue.ts). Each function is one statement (plus the
// wake-up sent after commit) and takes the caller's transaction, so a job commits (or rolls back)
// with the row that asked for it.
import type { Sequelize, Transaction } from 'sequelize';
import type { QueueName } from '../../shared/constants.ts';
import { queueChannel } from './channel.ts';
import { sequelizeRows, type Sql } from '../db/sql.ts';
import { ENQUEUE_JOB, REMOVE_JOB, WAKE } from './sql/enqueue.ts';
import type { EnqueueJobOptions } from './types.ts';

export const DEFAULT_MAX_ATTEMPTS = 5;

// Waking the workers. The NOTIFY is sent after the enqueueing transaction commits, by a statement of
// its own, and at most one at a time per queue and process (a wake asked for meanwhile is sent once
// the current one is done, so none is lost). A NOTIFY inside the transaction made PostgreSQL
// serialize the commits of every enqueueing transaction — it holds a database-wide lock through the
// commit's WAL flush — which capped accepted sends at a few hundred a second (see bench/).
interface WakeState {
  inFlight: boolean;
  again: boolean;
}
// Keyed by what sends the NOTIFY (a Sequelize instance, or the plain-pg Sql of the accept path), so each
// connection's wake state lives and dies with that connection, which deps own: no state of its own at import.
const wakeStates = new WeakMap<object, Map<string, WakeState>>();
const wokenByTransaction = new WeakMap<Transaction, Set<QueueName>>();

function coalescedWake(owner: object, queue: string, notify: () => Promise<unknown>): void {
  let states = wakeStates.get(owner);
  if (!states) wakeStates.set(owner, (states = new Map()));
  let state = states.get(queue);
  if (!state) states.set(queue, (state = { inFlight: false, again: false }));
  if (state.inFlight) {
    state.again = true;
    return;
  }
  state.inFlight = true;
  const current = state;
  const send = (): void => {
    current.again = false;
    notify()
      // Workers also poll: a lost wake-up only delays the job until their next poll.
      .catch(() => {})
      .finally(() => {
        if (current.again) send();
        else current.inFlight = false;
      });
  };
  send();
}

function wakeWorkers(sequelize: Sequelize, queue: QueueName): void {
  coalescedWake(sequelize, queue, () => sequelizeRows(sequelize, WAKE, [queueChannel(queue), queue]));
}

/**
 * A NOTIFY on `channel` after the caller's statement committed, coalesced as the queues' wake-ups are:
 * for a listener that is no queue's (the MTA loops on the spool's channel, woken by a submission the
 * accept statement spooled: mta/spooler.ts).
 */
export function notifyAfterCommit(sql: Sql, channel: string): void {
  coalescedWake(sql, `channel:${channel}`, () => sql.rows(WAKE, [channel, '']));
}

/** wakeQueue for plain-pg callers (the accept path), after their statement committed. */
export function wakeQueueWithSql(sql: Sql, queue: QueueName): void {
  coalescedWake(sql, queue, () => sql.rows(WAKE, [queueChannel(queue), queue]));
}

/** Wakes the queue's workers once `transaction` commits (once per queue, however many jobs it adds). */
function wakeWorkersAfterCommit(sequelize: Sequelize, queue: QueueName, transaction: Transaction): void {
  let queues = wokenByTransaction.get(transaction);
  if (!queues) wokenByTransaction.set(transaction, (queues = new Set()));
  if (queues.has(queue)) return;
  queues.add(queue);
  transaction.afterCommit(() => wakeWorkers(sequelize, queue));
}

/**
 * Adds a job and, when it is due now, wakes the queue's workers (after the caller's transaction
 * commits). With a `key` that already waits in the queue, the existing job is kept and its id returned.
 */
export async function enqueueJob(
  sequelize: Sequelize,
  options: EnqueueJobOptions,
  transaction?: Transaction,
): Promise<string> {
  const values = [
    options.queue,
    options.tenantId ?? null,
    JSON.stringify(options.payload),
    options.runAt ?? null,
    options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    options.key ?? null,
  ];
  const statement = () => sequelizeRows<{ id: string; inserted: boolean }>(sequelize, ENQUEUE_JOB, values, transaction);
  // A same-key job committed by another transaction while ours waited on the unique index is not
  // in this statement's snapshot; the next statement sees it.
  let rows = await statement();
  if (!rows[0] && options.key && !transaction) rows = await statement();
  if (!rows[0])
    throw new Error(`enqueueJob: job with key ${options.key} in ${options.queue} vanished while enqueueing`);
  const due = !options.runAt || options.runAt.getTime() <= Date.now();
  if (rows[0].inserted && due) wakeQueue(sequelize, options.queue, transaction);
  return rows[0].id;
}

/**
 * For callers that insert jobs with SQL of their own (one statement for a send and its job): wakes
 * the queue's workers now, or once `transaction` commits.
 */
export function wakeQueue(sequelize: Sequelize, queue: QueueName, transaction?: Transaction): void {
  if (transaction) wakeWorkersAfterCommit(sequelize, queue, transaction);
  else wakeWorkers(sequelize, queue);
}

/**
 * Cancels the waiting job with this key (a scheduled send that was cancelled). Answers false when
 * there is none, or when a worker has already taken it (it can no longer be stopped).
 */
export async function removeJob(
  sequelize: Sequelize,
  queue: QueueName,
  key: string,
  transaction?: Transaction,
): Promise<boolean> {
  const rows = await sequelizeRows(sequelize, REMOVE_JOB, [queue, key], transaction);
  return rows.length > 0;
}
