// Wakes a worker loop early: on a NOTIFY for its queue, when a job slot frees up, or at shutdown
// (onAbort). A wake that arrives while the loop is busy is remembered, so no notification is lost.
import pg from 'pg';
import type { Logger } from 'pino';
import type { QueueName } from '../../shared/constants.ts';
import { queueChannel } from '../queue/channel.ts';

export interface Waker {
  wake(): void;
  /** Resolves on the next wake, or after `ms`. */
  wait(ms: number): Promise<void>;
}

export function createWaker(): Waker {
  let pending = false;
  let resolveWait: (() => void) | null = null;
  return {
    wake() {
      if (resolveWait) {
        const resolve = resolveWait;
        resolveWait = null;
        resolve();
      } else {
        pending = true;
      }
    },
    wait(ms) {
      if (pending) {
        pending = false;
        return Promise.resolve();
      }
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          resolveWait = null;
          resolve();
        }, ms);
        resolveWait = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    },
  };
}

/**
 * Wakes a loop when each time it is given comes (a retry this node scheduled, a row shaping gave back),
 * so the row is claimed when it falls due, not at the next poll (up to `pollMs` late). Times are
 * gathered in slots of `slotMs`: one timer per slot, however many rows fall due in it. The loop's poll
 * still covers what other nodes schedule.
 */
export class WakeTimer {
  private readonly timers = new Map<number, NodeJS.Timeout>();

  constructor(
    private readonly waker: Waker,
    private readonly slotMs = 50,
    /** Added to each slot's end: a claim compares with the database's clock, which may run a little behind. */
    private readonly slackMs = 20,
  ) {}

  at(time: Date | number, now = Date.now()): void {
    const ms = typeof time === 'number' ? time : time.getTime();
    const slot = Math.ceil(ms / this.slotMs) * this.slotMs;
    if (this.timers.has(slot)) return;
    const timer = setTimeout(
      () => {
        this.timers.delete(slot);
        this.waker.wake();
      },
      Math.max(0, slot - now + this.slackMs),
    );
    timer.unref();
    this.timers.set(slot, timer);
  }

  /** Timers armed now (one per slot). */
  get armed(): number {
    return this.timers.size;
  }

  close(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}

const RELISTEN_DELAY_MS = 5_000;

/**
 * LISTENs on the queue's channel with a connection of its own (a pooled one could be handed back
 * and lose the subscription). When the connection drops, the loop's poll carries on alone and the
 * listener reconnects after a pause.
 */
export function listenForJobs(
  databaseUrl: string,
  queue: QueueName,
  waker: Waker,
  log: Logger,
): { close(): Promise<void> } {
  return listenOnChannel(databaseUrl, queueChannel(queue), waker, log);
}

/** listenForJobs on any NOTIFY channel (the outbound MTA's spool: mta/sql/spool.ts). */
export function listenOnChannel(
  databaseUrl: string,
  channel: string,
  waker: Waker,
  log: Logger,
): { close(): Promise<void> } {
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;

  const connect = async () => {
    const next = new pg.Client({ connectionString: databaseUrl });
    next.on('notification', () => waker.wake());
    next.on('error', (error) => {
      log.warn({ err: error.message }, 'job listener connection lost; polling until it is back');
      next.end().catch(() => {});
      if (client === next) client = null;
      if (!closed) retry = setTimeout(() => void connect(), RELISTEN_DELAY_MS);
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${channel}`);
      if (closed) {
        await next.end();
        return;
      }
      client = next;
      // Jobs enqueued while we were not listening are picked up now rather than at the next poll.
      waker.wake();
    } catch (error) {
      log.warn({ err: (error as Error).message }, 'could not LISTEN for jobs; polling meanwhile');
      await next.end().catch(() => {});
      if (!closed) retry = setTimeout(() => void connect(), RELISTEN_DELAY_MS);
    }
  };
  void connect();

  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await client?.end().catch(() => {});
      client = null;
    },
  };
}

// Every loop of a thread waits on the one shutdown signal, and the background thread runs a dozen
// of them at once (each maintenance task sleeps on it): one 'abort' listener per waiter passed
// Node's limit of 10 and printed MaxListenersExceededWarning at every boot. Waiters register here
// instead, and each signal carries a single listener that calls them all.
const abortCallbacks = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `callback` once when `signal` aborts (at once when it already has); the returned function unregisters it. */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  if (signal.aborted) {
    callback();
    return () => {};
  }
  let callbacks = abortCallbacks.get(signal);
  if (!callbacks) {
    const registered = new Set<() => void>();
    abortCallbacks.set(signal, registered);
    signal.addEventListener(
      'abort',
      () => {
        abortCallbacks.delete(signal);
        for (const registeredCallback of registered) registeredCallback();
      },
      { once: true },
    );
    callbacks = registered;
  }
  callbacks.add(callback);
  return () => callbacks.delete(callback);
}
