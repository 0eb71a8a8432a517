// The outbound MTA's per-destination loop (issue 28, docs/mta.md), on the leased-batch engine: claim
// due spool rows (mta/sql/spool.ts), one lane per destination domain holding that destination's
// connection pool (mta/pool.ts), route each row (mta/mx.ts) under the TLS policy of each MX host
// (mta/tls-policy.ts), and commit a batch of attempts in one transaction: the spool rows (deleted when
// finished, deferred to retry.ts's time) with the recipients' outcomes (emails/outcomes.ts: status,
// event, webhook, suppression, pause). Woken by the transport target's NOTIFY; the poll is the net.
// Shaping (mta/shaping.ts) decides after routing whether a row may go now and over which provider's
// pool; a reply that matches a reaction rule (mta/reactions.ts) is recorded with its batch.
import { errorText } from '../errors.ts';
import { hostname } from 'node:os';
import type { BoundStatement } from '../db/sql.ts';
import type { DeliveryOutcome } from '../mail/delivery-outcome.ts';
import { recordDeliveryOutcomes } from '../modules/emails/outcomes.ts';
import type { TimelineRow } from '../modules/emails/sql/record-outcomes.ts';
import { emitEvent } from '../modules/webhooks/events.ts';
import type { RecipientResult } from '../mta/connection.ts';
import { createDnsClient } from '../mta/dns-query.ts';
import { RouteCache } from '../mta/mx.ts';
import { watchResolver } from '../mta/resolver-health.ts';
import { recordResolverHealth } from '../mta/sql/resolver-health.ts';
import { deferredByError } from '../mta/outcome.ts';
import { DEFAULT_POOL_LIMITS } from '../mta/pool.ts';
import { recordReaction } from '../mta/reactions.ts';
import {
  releasedSettlement,
  settleAttempt,
  pendingRecipients,
  waitSettlement,
  type Settlement,
} from '../mta/settle.ts';
import { Shaper, SHAPING_REFRESH_MS } from '../mta/shaping.ts';
import { SourceAddressChooser, type SourceUse } from '../mta/source-address.ts';
import { addCountsStatement, IP_POOLS_CHANNEL } from '../mta/sql/pools.ts';
import { SHAPING_CHANNEL } from '../mta/sql/providers.ts';
import type { ReactionRecord } from '../mta/sql/reactions.ts';
import {
  claimSpool,
  extendSpoolLeases,
  lockHeldSpoolStatement,
  SpoolAnsweredMarks,
  recordSpoolStatement,
  releaseSpool,
  SPOOL_CHANNEL,
  type SpooledRow,
  type SpoolRecipient,
} from '../mta/sql/spool.ts';
import { reportMailTls, TlsPolicy } from '../mta/tls-policy.ts';
import { recordTlsCountsStatement } from '../mta/sql/tls-report.ts';
import { isTlsReportMail, tlsSessionsOf, type TlsSession } from '../mta/tls-report.ts';
import { DeliverabilityTally } from '../modules/deliverability/tally.ts';
import { flushDeliverability } from '../modules/deliverability/sql.ts';
import { createLeasedBatchEngine, FixedLane, type Finished } from '../queue/leased-batch.ts';
import { runLeasedBatchLoop } from '../queue/leased-batch-loop.ts';
import type { ThreadRuntime } from './thread.ts';
import { createWaker, listenOnChannel, onAbort, WakeTimer } from '../queue/wake.ts';
import { SpooledMessages } from '../mta/spooled-messages.ts';
import { SourceFaults } from '../mta/source-faults.ts';
import { countDirectAttempt } from '../modules/metrics/count.ts';
import { METRIC } from '../modules/metrics/catalogue.ts';

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
/** Rows a destination may keep waiting beyond its connections. */
const WAITING_PER_DESTINATION = DEFAULT_POOL_LIMITS.maxConnections * 2;

/** Shaping reloads this often where NOTIFY does not reach it (the embedded PGlite). */
const EMBEDDED_SHAPING_REFRESH_MS = 5_000;

/**
 * One destination domain: its rows run up to DEFAULT_POOL_LIMITS.maxConnections at once, one transaction
 * each (its provider's pool, shaping.ts, may hold them to fewer connections); none while a reaction
 * suspends it (the engine gives its waiting rows back until then, and the claim skips it). Its
 * connections are shaping's, kept per provider and source address (IP pools, mta/source-address.ts).
 */
class DestinationLane extends FixedLane<SpooledRow> {
  /** Its provider, once a row of it has been routed. */
  provider: string | null = null;

  constructor(
    key: string,
    private readonly shaper: Shaper,
  ) {
    super(key, DEFAULT_POOL_LIMITS.maxConnections, WAITING_PER_DESTINATION);
  }

  override paused(now = Date.now()): boolean {
    this.pausedUntil = this.shaper.suspendedUntil(this.provider, this.key, now);
    return this.pausedUntil > now;
  }

  override freeSlots(): number {
    return this.paused() ? 0 : super.freeSlots();
  }

  override room(): number {
    return this.paused() ? 0 : super.room();
  }
}

/** An attempt's replies, or shaping's answer that the row may not go before `later`. */
type Tried =
  | { results: RecipientResult[]; provider: string | null; source: SourceUse | null }
  | { later: Date; reason?: string }
  | { waiting: Settlement };
/** A settlement with the reaction it set off and the provider its MX hosts belong to (for the deliverability rollup). */
type Attempted = Settlement & { reaction: ReactionRecord | null; domain: string; provider: string | null };

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
  const answeredMarks = new SpoolAnsweredMarks(sql, workerId);
  const stopCountingConnections = runtime.metrics.gauge(METRIC.mtaConnections, () =>
    [...shaper.connectionsByProvider()].map(([provider, value]) => ({ labels: [provider], value })),
  );

  // After a 2xx to DATA, before the batch commits: the recipients it took are marked `answered` in the
  // row, so a crash in between settles them from the mark on reclaim instead of sending them again.
  // A failed mark only reopens that window (the outcome still goes with the batch): logged, not fatal.
  const markAnswered = async (row: SpooledRow, marked: SpoolRecipient[], results: RecipientResult[]) => {
    const delivered = new Map(
      results.filter((r) => r.verdict.kind === 'delivered').map((r) => [r.address, r.verdict.response]),
    );
    if (delivered.size === 0) return;
    for (const [index, recipient] of marked.entries()) {
      const response = delivered.get(recipient.address);
      if (response !== undefined) marked[index] = { ...recipient, state: 'answered', response };
    }
    try {
      await answeredMarks.mark(row.id, marked);
    } catch (error) {
      log.warn({ err: errorText(error), id: row.id }, 'could not mark an answered spool row');
    }
  };

  const attempt = async (row: SpooledRow, lane: DestinationLane, tlsSessions: TlsSession[]): Promise<Tried> => {
    const to = pendingRecipients(row);
    // Reclaimed with every recipient answered before a crash: nothing to send, settle() records them.
    if (to.length === 0) return { results: [], provider: null, source: null };
    const all = (verdict: RecipientResult['verdict']) => ({
      results: to.map((address) => ({ address, verdict })),
      provider: null,
      source: null,
    });
    const route = await routes.route(row.domain);
    if (route.kind === 'undeliverable')
      return all({
        kind: 'bounced',
        bounceType: 'hard',
        response: `550 ${route.enhancedCode} ${route.reason}`,
        enhancedCode: route.enhancedCode,
      });
    if (route.kind === 'deferred') return all(deferredByError(route.reason));
    lane.provider = shaper.providerOf(route.hosts).key;
    const source = await sources.choose(
      row,
      route.hosts.map((host) => host.name),
      to.length,
    );
    if (source.kind === 'wait')
      // Waiting past the row's expiry would never try it again: a deferral instead, which expires it in time.
      return source.until < row.expiresAt
        ? { waiting: waitSettlement(row, source) }
        : all(deferredByError(source.reason));
    if (source.kind === 'unbindable') return all(deferredByError(source.reason));
    const use = source.kind === 'address' ? source.use : null;
    const admission = await shaper.admit(row, route.hosts, source.session);
    if (admission.kind === 'later') {
      if (use) sources.unused(use);
      return { later: admission.until, reason: admission.reason };
    }
    const reportMail = isTlsReportMail(row);
    const tls = reportMail ? reportMailTls(row.domain) : await tlsPolicy.forDestination(row.domain, route);
    const marked = [...row.recipients];
    let report;
    try {
      report = await admission.pool.deliver(
        route.hosts,
        tls.plan,
        { from: row.envelopeFrom, to },
        row.message,
        (results) => markAnswered(row, marked, results),
      );
    } catch (error) {
      if (use) sources.unused(use);
      throw error;
    }
    // The source address is not on this host (EADDRNOTAVAIL): said in the row's response and as an alert,
    // and a pool's address is left out here so the row goes at once from another (mta/source-faults.ts).
    if (report.unbindable !== undefined) {
      const reason = sourceFaults.failed(source.session.localAddress, report.unbindable);
      if (!use) return all(deferredByError(reason));
      sources.unused(use);
      sources.markUnbindable(use.addressId, reason);
      return { later: new Date() };
    }
    if (report.host !== null) sourceFaults.bound(source.session.localAddress);
    // No MX host answered: nothing reached the provider, nothing counts toward the warm-up.
    if (use && report.host === null) sources.unused(use);
    const localAddress = source.session.localAddress ?? config.outboundAddress;
    if (!reportMail) tlsSessions.push(...tlsSessionsOf(report.tlsAttempts, tls.policyOf, localAddress));
    return {
      results: report.recipients,
      provider: admission.provider.key,
      // What the provider refused counts against the warm-up's ramp (mta/warmup.ts WARMUP_HOLD).
      source:
        report.host === null || !use
          ? null
          : { ...use, refused: report.recipients.filter((r) => r.verdict.kind !== 'delivered').length },
    };
  };

  const run = async (row: SpooledRow, lane: DestinationLane): Promise<Attempted> => {
    let tried: Tried;
    const tlsSessions: TlsSession[] = [];
    try {
      tried = await attempt(row, lane, tlsSessions);
    } catch (error) {
      // Not an answer from the destination (a bug, a DNS socket error): try again later.
      const verdict = deferredByError(errorText(error));
      tried = {
        results: pendingRecipients(row).map((address) => ({ address, verdict })),
        provider: null,
        source: null,
      };
    }
    const untried = { reaction: null, domain: row.domain, provider: null };
    if ('later' in tried) return { ...releasedSettlement(row, tried.later, tried.reason ?? null), ...untried };
    if ('waiting' in tried) return { ...tried.waiting, ...untried };
    const reaction = tried.provider ? shaper.react(row, tried.provider, tried.results) : null;
    return {
      ...settleAttempt(row, tried.results, { retryBaseMs: config.sendRetryBaseMs }),
      tlsSessions,
      reaction,
      source: tried.source,
      domain: row.domain,
      provider: tried.provider,
    };
  };

  // One transaction: the rows and their outcomes are written together, so a crash neither loses an
  // outcome nor leaves a finished row to be sent again. The rows still held are locked first and their
  // outcomes recorded before the rows are: a delivery's log takes the fields its row keeps
  // (emails/sql/spooled-log.ts) from the row before it is deleted.
  const commit = async (batch: Array<Finished<SpooledRow, Attempted>>): Promise<void> => {
    const settlements = batch.map(({ outcome }) => outcome);
    // The attempts this worker still held, counted for /metrics once the transaction has committed.
    const recorded: Attempted[] = [];
    const written = await sequelize.transaction(async (transaction) => {
      const run = await sql.inTransaction(transaction);
      const runBound = <T extends object>(bound: BoundStatement) => run<T>(bound.statement, bound.values);
      const held = new Set(
        (
          await runBound<{ id: string }>(
            lockHeldSpoolStatement(
              settlements.map((s) => s.spool.id),
              workerId,
            ),
          )
        ).map((row) => row.id),
      );
      // TLS-RPT: every session happened, whoever holds the row now.
      const counts = recordTlsCountsStatement(settlements.flatMap((s) => s.tlsSessions ?? []));
      if (counts) await runBound(counts);
      // Warm-up: sent is sent, whether or not this worker still held the row: every attempt's count goes in.
      const warmup = addCountsStatement(settlements.flatMap((s) => (s.source ? [s.source] : [])));
      if (warmup) await runBound(warmup);
      // Per provider per day (modules/deliverability): written once, last, for the whole batch.
      const tally = new DeliverabilityTally();
      const outcomes: DeliveryOutcome[] = [];
      const timeline: TimelineRow[] = [];
      // The logs this batch attempted, each with a spool row that keeps its fields.
      const spooled = new Map<string, string>();
      for (const { item: row, outcome: settlement } of batch) {
        if (!held.has(settlement.spool.id)) continue;
        recorded.push(settlement);
        const provider = settlement.provider ?? undefined;
        if (provider) tally.sawProvider(settlement.domain, provider);
        for (const outcome of settlement.outcomes) outcomes.push({ ...outcome, provider });
        if (settlement.reaction) await recordReaction(sequelize, settlement.reaction, transaction, emitEvent);
        const { deferral } = settlement;
        // A wait of ours sent nothing: the log stays QUEUED, with a `waiting` row saying why and until when.
        const ours = deferral?.wait ?? null;
        if (row.emailId && ((deferral && !ours) || settlement.outcomes.length > 0)) spooled.set(row.emailId, row.id);
        if (!deferral) continue;
        if (ours) {
          timeline.push({
            tenantId: deferral.tenantId,
            emailId: deferral.emailId,
            type: 'waiting',
            data: { recipients: deferral.recipients, kind: ours, reason: deferral.response, until: deferral.retryAt },
          });
          continue;
        }
        // A provider's deferral only: a wait of ours (warm-up) or a DNS failure never reached its MX hosts.
        if (settlement.provider) tally.add(deferral.tenantId, 'deferred', deferral.recipients, settlement.provider);
        timeline.push({
          tenantId: deferral.tenantId,
          emailId: deferral.emailId,
          type: 'deferred',
          data: { recipients: deferral.recipients, response: deferral.response, retryAt: deferral.retryAt },
        });
      }
      await recordDeliveryOutcomes(outcomeDeps, { outcomes, timeline, spooled, workerId }, { transaction, run, tally });
      const rows = await runBound<{ id: string }>(
        recordSpoolStatement(
          settlements.filter((s) => held.has(s.spool.id)).map((s) => s.spool),
          workerId,
        ),
      );
      await flushDeliverability(run, tally);
      return rows.length;
    });
    sources.committed(settlements.flatMap((s) => (s.source ? [s.source] : [])));
    // A warm-up wait or a row shaping gave back was no attempt: only a deferred row's recipients were deferred.
    for (const s of recorded)
      countDirectAttempt(
        runtime.metrics,
        s.provider,
        s.outcomes,
        s.spool.state === 'deferred' ? (s.deferral?.recipients.length ?? 0) : 0,
      );
    for (const { spool } of settlements) if (spool.runAt) dueWake.at(spool.runAt);
    if (written < batch.length)
      log.warn({ lost: batch.length - written }, `${NOUN} finished after their lease was lost`);
  };

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
    newLaneRoom: DEFAULT_POOL_LIMITS.maxConnections + WAITING_PER_DESTINATION,
    claim: (want, lanes) => claimSpool(sql, workerId, tuning.leaseMs, lanes.full, want, spooledMessages),
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
