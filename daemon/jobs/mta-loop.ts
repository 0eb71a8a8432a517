// The outbound MTA's per-destination loop (issue 28, docs/mta.md): the wiring of the leased-batch engine
// (queue/leased-batch.ts) and its claim loop for the spool. It claims due spool rows (mta/sql/spool.ts)
// into one lane per destination domain (mta/lane.ts), runs each row's attempt (mta/attempt.ts: route,
// source address, shaping, TLS policy, delivery) and commits a batch of attempts in one transaction
// (mta/commit.ts), handing the commit what the modules record (emails/outcomes.ts, deliverability,
// the reaction's webhook event, /metrics) as ports. Woken by the spool's NOTIFY and by a timer when a
// row it wrote falls due; the poll is the net. Shaping rules, IP pools and resolver health are kept
// fresh here too.
import { errorText } from '../errors.ts';
import { hostname } from 'node:os';
import { recordDeliveryOutcomes } from '../modules/emails/outcomes.ts';
import { emitEvent } from '../modules/webhooks/events.ts';
import { DeliverabilityTally } from '../modules/deliverability/tally.ts';
import { flushDeliverability } from '../modules/deliverability/sql.ts';
import { countDirectAttempt } from '../modules/metrics/count.ts';
import { METRIC } from '../modules/metrics/catalogue.ts';
import { createSpoolAttempt, type Attempted } from '../mta/attempt.ts';
import { createSpoolCommit } from '../mta/commit.ts';
import { createDnsClient } from '../mta/dns-query.ts';
import { DestinationLane, NEW_DESTINATION_ROOM } from '../mta/lane.ts';
import { RouteCache } from '../mta/mx.ts';
import { watchResolver } from '../mta/resolver-health.ts';
import { Shaper, SHAPING_REFRESH_MS } from '../mta/shaping.ts';
import { SourceAddressChooser } from '../mta/source-address.ts';
import { SourceFaults } from '../mta/source-faults.ts';
import { SpooledMessages } from '../mta/spooled-messages.ts';
import { IP_POOLS_CHANNEL } from '../mta/sql/pools.ts';
import { SHAPING_CHANNEL } from '../mta/sql/providers.ts';
import { recordResolverHealth } from '../mta/sql/resolver-health.ts';
import {
  claimSpool,
  extendSpoolLeases,
  releaseSpool,
  SpoolAnsweredMarks,
  SPOOL_CHANNEL,
  type SpooledRow,
} from '../mta/sql/spool.ts';
import { TlsPolicy } from '../mta/tls-policy.ts';
import { createLeasedBatchEngine } from '../queue/leased-batch.ts';
import { runLeasedBatchLoop } from '../queue/leased-batch-loop.ts';
import { createWaker, listenOnChannel, onAbort, WakeTimer } from '../queue/wake.ts';
import type { ThreadRuntime } from './thread.ts';

const NOUN = 'spooled messages';
/** Rows one claim takes at most (one statement). */
const CLAIM_BATCH = 100;
/** Rows waiting in lanes or on the wire at once, over all destinations. */
const MAX_ACTIVE = 200;
/** Attempts one commit writes at most. */
const COMMIT_BATCH_MAX = 100;
/**
 * How long a commit waits for more outcomes while attempts still run (below half a batch). At 5 ms,
 * bench:mta's commits held ~6 attempts each: five statements and a WAL flush for every six messages.
 */
const COMMIT_LINGER_MS = 20;
/**
 * A wake-up (a spooled message's NOTIFY, one per message) waits this long before claiming: claiming at
 * once took ~1.1 rows per claim statement in bench:mta (7,452 claims for 8,440 rows).
 */
const CLAIM_LINGER_MS = 20;
const ERROR_PAUSE_MS = 1_000;
/** A destination unused this long closes its pool. */
const IDLE_LANE_MS = 60_000;

/** Shaping reloads this often where NOTIFY does not reach it (the embedded PGlite). */
const EMBEDDED_SHAPING_REFRESH_MS = 5_000;

export async function runMtaLoop(runtime: ThreadRuntime): Promise<void> {
  const { ctx, tuning, signal } = runtime;
  const { sql, log, workerId, config, sequelize } = ctx;
  const dns = createDnsClient({ servers: config.dnsServers });
  // A resolver fault defers mail, never bounces it; each check is shown once per node (queue view, /metrics).
  const resolver = watchResolver(dns, {
    canaries: config.dnsCanaryNames,
    confirmAfterMs: config.dnsNxdomainConfirmMs,
    publish: (state, changed) => {
      if (changed && !state.healthy) log.warn({ lastError: state.lastError }, 'resolver unhealthy: mail is deferred');
      else if (changed) log.info({ since: state.since }, 'resolver healthy');
      recordResolverHealth(sql, hostname(), config.dnsCanaryNames, state).catch((error: unknown) =>
        log.warn({ err: errorText(error) }, 'could not record the resolver health'),
      );
    },
  });
  const routes = new RouteCache(dns, resolver.negatives);
  const tlsPolicy = new TlsPolicy(dns);
  const session = { ehloName: config.ehloName, localAddress: config.outboundAddress ?? undefined };
  const outcomeDeps = { sequelize, config, secrets: ctx.secrets };
  const waker = createWaker();
  // Retries, and rows given back by shaping or a paused lane, are claimed when due rather than at the next poll.
  const dueWake = new WakeTimer(waker);
  // The messages this process's send threads spool, handed over in memory (the claim reads the others).
  const spooledMessages = new SpooledMessages();
  const shaper = new Shaper({ sql, log, session, wakeAt: (at) => dueWake.at(at) });
  const sources = new SourceAddressChooser({ sql, fallback: session });
  const sourceFaults = new SourceFaults(sql, log);
  const stopCountingConnections = runtime.metrics.gauge(METRIC.mtaConnections, () =>
    [...shaper.connectionsByProvider()].map(([provider, value]) => ({ labels: [provider], value })),
  );

  const run = createSpoolAttempt({
    log,
    config,
    routes,
    tlsPolicy,
    shaper,
    sources,
    sourceFaults,
    answeredMarks: new SpoolAnsweredMarks(sql, workerId),
  });
  const commit = createSpoolCommit({
    sql,
    sequelize,
    log,
    workerId,
    sources,
    wakeAt: (at) => dueWake.at(at),
    // What the modules record with each batch: mta/ knows none of them (mta/commit.ts).
    ports: {
      newTally: () => new DeliverabilityTally(),
      recordOutcomes: (input, within) => recordDeliveryOutcomes(outcomeDeps, input, within),
      flushTally: flushDeliverability,
      emitEvent,
      countAttempt: (provider, outcomes, deferred) => countDirectAttempt(runtime.metrics, provider, outcomes, deferred),
    },
  });

  const engine = createLeasedBatchEngine<SpooledRow, Attempted, DestinationLane>({
    log,
    noun: NOUN,
    leaseMs: tuning.leaseMs,
    claimBatch: CLAIM_BATCH,
    maxActive: MAX_ACTIVE,
    maxHeld: MAX_ACTIVE * 2,
    maxAnswered: MAX_ACTIVE,
    extendsAnswered: true,
    claimAt: Math.ceil(CLAIM_BATCH / 10),
    commitBatchMax: COMMIT_BATCH_MAX,
    commitLingerMs: COMMIT_LINGER_MS,
    commitLingerBelow: COMMIT_BATCH_MAX / 2,
    commitRetryMs: ERROR_PAUSE_MS,
    idleLaneMs: IDLE_LANE_MS,
    idOf: (row) => row.id,
    laneOf: (row) => row.domain,
    newLane: (domain) => new DestinationLane(domain, shaper),
    onLaneClosed: (domain) => shaper.closeDestination(domain),
    newLaneRoom: NEW_DESTINATION_ROOM,
    claim: (want, lanes) => claimSpool(sql, workerId, tuning.leaseMs, lanes, want, spooledMessages),
    extend: (rows) =>
      extendSpoolLeases(
        sql,
        rows.map((row) => row.id),
        workerId,
        tuning.leaseMs,
      ),
    release: async (rows, until) => {
      await releaseSpool(
        sql,
        rows.map((row) => row.id),
        workerId,
        until ?? null,
      );
      if (until) dueWake.at(until);
    },
    run,
    commit,
  });

  // Rules, reactions and throttles: read before the first claim, again on each NOTIFY and every so often.
  await shaper.refresh();
  const shapingWaker = createWaker();
  const stopShaping = onAbort(signal, () => shapingWaker.wake());
  const shapingListener = runtime.embedded
    ? null
    : listenOnChannel(runtime.data.databaseUrl, SHAPING_CHANNEL, shapingWaker, log);
  const refreshing = (async () => {
    const everyMs = runtime.embedded ? EMBEDDED_SHAPING_REFRESH_MS : SHAPING_REFRESH_MS;
    while (!signal.aborted) {
      await shapingWaker.wait(everyMs);
      if (!signal.aborted) await shaper.refresh();
    }
  })();
  const listener = runtime.embedded ? null : listenOnChannel(runtime.data.databaseUrl, SPOOL_CHANNEL, waker, log);
  // An admin's change to a pool applies at once: on this node through the threads' broadcast channel,
  // on the others through NOTIFY (the embedded database has no cross-connection NOTIFY, and one node).
  const poolChanges = new BroadcastChannel(IP_POOLS_CHANNEL);
  poolChanges.onmessage = () => sources.forget();
  const poolListener = runtime.embedded
    ? null
    : listenOnChannel(
        runtime.data.databaseUrl,
        IP_POOLS_CHANNEL,
        { wake: () => sources.forget(), wait: () => Promise.resolve() },
        log,
      );
  try {
    await runLeasedBatchLoop(engine, {
      signal,
      waker,
      log,
      noun: NOUN,
      pollMs: runtime.embedded ? tuning.embeddedPollMs : tuning.pollMs,
      claimGapMs: 0,
      wakeLingerMs: CLAIM_LINGER_MS,
      claimErrorPauseMs: ERROR_PAUSE_MS,
      drainTimeoutMs: tuning.drainTimeoutMs,
    });
  } finally {
    stopShaping();
    stopCountingConnections();
    shapingWaker.wake();
    await refreshing;
    await Promise.all([listener?.close(), shapingListener?.close()]);
    shaper.close();
    await poolListener?.close();
    poolChanges.close();
    spooledMessages.close();
    dueWake.close();
    resolver.stop();
  }
}
