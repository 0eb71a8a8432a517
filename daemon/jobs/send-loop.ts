// The send worker's loop, batched (issue 13): claim a batch of send jobs with their logs in one
// statement, deliver them concurrently (the SMTP pool bounds how many are on the wire), and record the
// outcomes of whatever finished meanwhile in one statement — group commit: while one write runs, the
// next batch of outcomes gathers. No transaction per message. A job stays leased (and its lease
// extended) until the statement that records its outcome has run; if the process dies before, the
// lease expires and the job runs again (at-least-once, duplicates bounded by what was in flight).
import { backoffDelayMs } from '../queue/backoff.ts';
import {
  claimSends,
  extendSendLeases,
  recordSendOutcomes,
  type ClaimedSend,
  type JobSettlement,
} from '../queue/sends.ts';
import {
  attemptDelivery,
  jobOutcomeOf,
  outcomesOf,
  recordBounces,
  sendLogOf,
  type AttemptResult,
  type DeliveryDeps,
} from '../modules/emails/send-job.ts';
import { createSendContextCache } from '../modules/emails/send-context.ts';
import type { JobOutcome } from '../queue/types.ts';
import { onAbort, type ThreadRuntime } from './thread.ts';
import { createWaker, listenForJobs } from './wake.ts';

const CLAIM_ERROR_PAUSE_MS = 1_000;
/** Outcomes written by one statement at most (its arrays stay a few hundred kB). */
const RECORD_BATCH_MAX = 200;
/**
 * Jobs held per delivery slot, counting those delivered and waiting for their outcome to be written:
 * a slow record statement (a busy database) does not stop the deliveries behind it. It also bounds
 * the duplicates a crash can cause (jobs held run again).
 */
const HELD_PER_SLOT = 3;
/**
 * While deliveries are still finishing, a record statement waits up to this long for a batch to
 * gather: a statement costs a round trip, a commit and its planning whatever its size, and without
 * it the writer issued ~290 statements/s of 3–4 outcomes each on the unsigned drain.
 */
const RECORD_LINGER_MS = 5;

interface Settled {
  jobId: string;
  job: JobOutcome;
  /** Null when nothing was attempted (log gone or settled, a payload without emailId, a throw). */
  result: AttemptResult | null;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function settlementOf(batch: Settled[]): JobSettlement {
  const jobs: JobSettlement = { done: [], retry: [], fail: [] };
  for (const { jobId, job } of batch) {
    if (job.kind === 'done') jobs.done.push(jobId);
    else if (job.kind === 'retry') jobs.retry.push({ id: jobId, delayMs: job.delayMs, error: job.error });
    else jobs.fail.push({ id: jobId, error: job.error });
  }
  return jobs;
}

export async function runSendLoop(runtime: ThreadRuntime): Promise<void> {
  const { ctx, tuning, signal } = runtime;
  const { sql, log, workerId } = ctx;
  const deps: DeliveryDeps = {
    sequelize: ctx.sequelize,
    sql,
    config: ctx.config,
    secrets: ctx.secrets,
    mailTransports: ctx.mailTransports,
    reactEmailSandbox: ctx.reactEmailSandbox,
  };
  const cache = createSendContextCache(sql, ctx.secrets);
  // Jobs leased by this loop whose outcome is not recorded yet (delivering, or waiting to be written).
  const held = new Set<string>();
  let delivering = 0;
  const pending: Settled[] = [];
  let writing = false;
  const waker = createWaker();
  onAbort(signal, () => waker.wake());
  const listener = runtime.embedded ? null : listenForJobs(runtime.data.databaseUrl, 'send', waker, log);
  const pollMs = runtime.embedded ? tuning.embeddedPollMs : tuning.pollMs;
  // Jobs the loop may claim now: free delivery slots, within what it may hold.
  const room = (): number => Math.min(tuning.concurrency - delivering, tuning.concurrency * HELD_PER_SLOT - held.size);
  // Claim again once half a batch can be claimed, not for every job that settles: a claim is a
  // round trip, and claims of a few jobs each (one per record statement) cost more than they gain.
  // While a claim runs, the loop looks at the room itself when it returns.
  let claiming = false;
  const claimAt = Math.ceil(Math.min(tuning.batchSize, tuning.concurrency) / 2);
  const wakeIfRoom = (): void => {
    if ((!claiming && room() >= claimAt) || signal.aborted) waker.wake();
  };

  const leaseTimer = setInterval(
    () => {
      const ids = [...held];
      extendSendLeases(sql, ids, workerId, tuning.leaseMs).then(
        (kept) => {
          if (kept.length < ids.length)
            log.warn({ lost: ids.filter((id) => !kept.includes(id)) }, 'lost the lease of running send jobs');
        },
        (error) => log.warn({ err: errorText(error) }, 'could not extend leases'),
      );
    },
    Math.max(50, Math.floor(tuning.leaseMs / 3)),
  );

  const write = async (batch: Settled[]): Promise<void> => {
    const results = batch.flatMap((s) => (s.result ? [s.result] : []));
    try {
      const recorded = await recordSendOutcomes(sql, workerId, outcomesOf(results, settlementOf(batch)));
      if (recorded.settled < batch.length)
        log.warn({ lost: batch.length - recorded.settled }, 'send jobs finished after their lease was lost');
      if (recorded.failed > 0) log.warn({ failed: recorded.failed }, 'send jobs failed for good: no attempts left');
    } catch (error) {
      // One bad row (a log deleted meanwhile) must not hold back the others: write them one by one.
      if (batch.length > 1) {
        for (const one of batch) await write([one]);
        return;
      }
      log.error(
        { job: batch[0].jobId, err: errorText(error) },
        'could not record the outcome; the job runs again after its lease',
      );
      return;
    }
    for (const result of results) {
      if (result.bounces.length)
        await recordBounces(deps, result).catch((error) =>
          log.error({ err: errorText(error) }, 'could not record a hard bounce'),
        );
    }
  };

  // Group commit: one write at a time; what settles meanwhile goes into the next one.
  let lingering: NodeJS.Timeout | null = null;
  const flush = (now = false): void => {
    if (writing || pending.length === 0) return;
    if (!now && pending.length < tuning.batchSize && delivering > 0 && !signal.aborted) {
      lingering ??= setTimeout(() => {
        lingering = null;
        flush(true);
      }, RECORD_LINGER_MS);
      return;
    }
    if (lingering) clearTimeout(lingering);
    lingering = null;
    writing = true;
    const batch = pending.splice(0, RECORD_BATCH_MAX);
    void write(batch).finally(() => {
      for (const settled of batch) held.delete(settled.jobId);
      writing = false;
      wakeIfRoom();
      flush();
    });
  };

  // Two jobs of one batch for the same log: the log was marked once, so it is sent once.
  const deliver = async (claimed: ClaimedSend, duplicate: boolean): Promise<Settled> => {
    if (claimed.emailId === null)
      return { jobId: claimed.jobId, job: { kind: 'fail', error: 'send job without an emailId' }, result: null };
    if (!claimed.log || duplicate) return { jobId: claimed.jobId, job: { kind: 'done' }, result: null };
    try {
      const result = await attemptDelivery(deps, cache, sendLogOf(claimed.log), {
        attemptsSoFar: claimed.attempts,
        maxAttempts: claimed.maxAttempts,
      });
      return { jobId: claimed.jobId, job: jobOutcomeOf(result.status), result };
    } catch (error) {
      // Not decided (the sender's domain could not be read): back off; the log stays SENDING.
      return {
        jobId: claimed.jobId,
        job: { kind: 'retry', delayMs: backoffDelayMs(claimed.attempts, tuning.retryBaseMs), error: errorText(error) },
        result: null,
      };
    }
  };

  try {
    while (!signal.aborted) {
      const want = Math.max(0, Math.min(room(), tuning.batchSize));
      let claimed: ClaimedSend[] = [];
      if (want > 0) {
        try {
          claiming = true;
          claimed = await claimSends(sql, workerId, want, tuning.leaseMs).finally(() => (claiming = false));
        } catch (error) {
          log.warn({ err: errorText(error) }, 'could not claim send jobs; trying again shortly');
          await waker.wait(CLAIM_ERROR_PAUSE_MS);
          continue;
        }
        const seen = new Set<string>();
        for (const job of claimed) {
          held.add(job.jobId);
          const duplicate = job.emailId !== null && seen.has(job.emailId);
          if (job.emailId !== null) seen.add(job.emailId);
          delivering += 1;
          void deliver(job, duplicate).then((settled) => {
            delivering -= 1;
            pending.push(settled);
            flush();
            wakeIfRoom();
          });
        }
      }
      // A full batch means more may be due: claim again at once if half a batch fits. Otherwise sleep until woken.
      if (want > 0 && claimed.length === want && room() >= claimAt) continue;
      await waker.wait(pollMs);
    }
    if (held.size > 0) {
      log.info({ running: held.size }, 'draining in-flight send jobs');
      const deadline = Date.now() + tuning.drainTimeoutMs;
      while (held.size > 0 && Date.now() < deadline) await waker.wait(Math.min(100, deadline - Date.now()));
    }
  } finally {
    clearInterval(leaseTimer);
    await listener?.close();
  }
}
