// The send worker's loop, batched (issue 13), on the leased-batch engine (queue/leased-batch.ts): claim a
// batch of send jobs with their logs in one statement, deliver them concurrently (the SMTP pool
// bounds how many are on the wire), and record the outcomes of whatever finished meanwhile in one
// statement — group commit: while one write runs, the next batch of outcomes gathers. No
// transaction per message. A job stays leased (and its lease extended) until the statement that
// records its outcome has run; if the process dies before, the lease expires and the job runs again
// (at-least-once, duplicates bounded by what was in flight). One lane: the relay (or capture).
import { errorText } from '../errors.ts';
import { backoffDelayMs } from '../queue/backoff.ts';
import {
  claimSends,
  extendSendLeases,
  recordSendOutcomes,
  type ClaimedSend,
  type JobSettlement,
} from '../modules/emails/drain.ts';
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
import { countRelayAttempt } from '../modules/metrics/count.ts';
import type { JobOutcome } from '../queue/types.ts';
import { createLeasedBatchEngine, FixedLane, type Finished } from '../queue/leased-batch.ts';
import { runLeasedBatchLoop } from '../queue/leased-batch-loop.ts';
import type { ThreadRuntime } from './thread.ts';
import { createWaker, listenForJobs } from '../queue/wake.ts';

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
/** The send drain's one lane: every message goes to the same relay pool. */
const RELAY_LANE = 'relay';

/** A claimed job; `duplicate` when an earlier job of the same claim is for the same log. */
interface HeldSend {
  claimed: ClaimedSend;
  duplicate: boolean;
}

interface Settled {
  job: JobOutcome;
  /** Null when nothing was attempted (log gone or settled, a payload without emailId, a throw). */
  result: AttemptResult | null;
}

function settlementOf(batch: Array<Finished<HeldSend, Settled>>): JobSettlement {
  const jobs: JobSettlement = { done: [], retry: [], fail: [] };
  for (const { item, outcome } of batch) {
    const jobId = item.claimed.jobId;
    const { job } = outcome;
    if (job.kind === 'done') jobs.done.push(jobId);
    else if (job.kind === 'retry') jobs.retry.push({ id: jobId, delayMs: job.delayMs, error: job.error });
    else jobs.fail.push({ id: jobId, error: job.error });
  }
  return jobs;
}

/** Two jobs of one claim for the same log: it is sent once (the other job is done). */
function markDuplicates(claimed: ClaimedSend[]): HeldSend[] {
  const seen = new Set<string>();
  return claimed.map((job) => {
    const duplicate = job.emailId !== null && seen.has(job.emailId);
    if (job.emailId !== null) seen.add(job.emailId);
    return { claimed: job, duplicate };
  });
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

  const deliver = async ({ claimed, duplicate }: HeldSend): Promise<Settled> => {
    if (claimed.emailId === null) return { job: { kind: 'fail', error: 'send job without an emailId' }, result: null };
    if (!claimed.log || duplicate) return { job: { kind: 'done' }, result: null };
    try {
      const result = await attemptDelivery(deps, cache, sendLogOf(claimed.log), {
        attemptsSoFar: claimed.attempts,
        maxAttempts: claimed.maxAttempts,
        // The claim did not write the log: the attempt is counted with its outcome (claim-sends.ts).
        logAttempt: claimed.attempts + 1,
      });
      return { job: jobOutcomeOf(result.status), result };
    } catch (error) {
      // Not decided (the sender's domain could not be read): back off; the log stays QUEUED.
      return {
        job: { kind: 'retry', delayMs: backoffDelayMs(claimed.attempts, tuning.retryBaseMs), error: errorText(error) },
        result: null,
      };
    }
  };

  const write = async (batch: Array<Finished<HeldSend, Settled>>): Promise<void> => {
    const results = batch.flatMap(({ outcome }) => (outcome.result ? [outcome.result] : []));
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
        { job: batch[0].item.claimed.jobId, err: errorText(error) },
        'could not record the outcome; the job runs again after its lease',
      );
      return;
    }
    // Recorded: this node's /metrics counts each recipient's outcome (modules/metrics/count.ts).
    for (const { item, outcome } of batch)
      if (outcome.result && item.claimed.log) countRelayAttempt(runtime.metrics, item.claimed.log, outcome.result);
    for (const result of results) {
      if (result.bounces.length)
        await recordBounces(deps, result).catch((error) =>
          log.error({ err: errorText(error) }, 'could not record a hard bounce'),
        );
    }
  };

  const engine = createLeasedBatchEngine<HeldSend, Settled, FixedLane<HeldSend>>({
    log,
    noun: 'send jobs',
    leaseMs: tuning.leaseMs,
    claimBatch: tuning.batchSize,
    maxActive: tuning.concurrency,
    maxHeld: tuning.concurrency * HELD_PER_SLOT,
    maxAnswered: Infinity,
    extendsAnswered: true,
    // Claim again once half a batch can be claimed, not for every job that settles: a claim is a
    // round trip, and claims of a few jobs each (one per record statement) cost more than they gain.
    claimAt: Math.ceil(Math.min(tuning.batchSize, tuning.concurrency) / 2),
    commitBatchMax: RECORD_BATCH_MAX,
    commitLingerMs: RECORD_LINGER_MS,
    commitLingerBelow: tuning.batchSize,
    commitRetryMs: CLAIM_ERROR_PAUSE_MS,
    idleLaneMs: Infinity,
    idOf: (held) => held.claimed.jobId,
    laneOf: () => RELAY_LANE,
    newLane: (key) => new FixedLane<HeldSend>(key, tuning.concurrency),
    newLaneRoom: tuning.concurrency,
    claim: async (want) => markDuplicates(await claimSends(sql, workerId, want, tuning.leaseMs)),
    extend: async (held) =>
      (
        await extendSendLeases(
          sql,
          held.map((one) => one.claimed.jobId),
          workerId,
          tuning.leaseMs,
        )
      ).length,
    run: deliver,
    // Never throws: a batch that cannot be written is written one by one, and a job whose row cannot
    // be written is left to its lease.
    commit: write,
  });

  const waker = createWaker();
  const listener = runtime.embedded ? null : listenForJobs(runtime.data.databaseUrl, 'send', waker, log);
  try {
    await runLeasedBatchLoop(engine, {
      signal,
      waker,
      log,
      noun: 'send jobs',
      pollMs: runtime.embedded ? tuning.embeddedPollMs : tuning.pollMs,
      claimGapMs: 0,
      claimErrorPauseMs: CLAIM_ERROR_PAUSE_MS,
      drainTimeoutMs: tuning.drainTimeoutMs,
    });
  } finally {
    await listener?.close();
  }
}
