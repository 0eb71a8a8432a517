// The outbound MTA's per-destination loop (issue 28, docs/mta.md), on the leased-batch engine: claim
// due spool rows (mta/sql/spool.ts), one lane per destination domain holding that destination's
// connection pool (mta/pool.ts), route each row (mta/mx.ts) under the TLS policy of each MX host
// (mta/tls-policy.ts), and commit a batch of attempts in one transaction: the spool rows (deleted when
// finished, deferred to retry.ts's time) with the recipients' outcomes (emails/outcomes.ts: status,
// event, webhook, suppression, pause). Woken by the transport target's NOTIFY; the poll is the net.
import { QueryTypes } from 'sequelize';
import { recordDeliveryOutcome, recordEmailEvent } from '../modules/emails/outcomes.ts';
import type { RecipientResult } from '../mta/connection.ts';
import { createDnsClient } from '../mta/dns-query.ts';
import { RouteCache } from '../mta/mx.ts';
import { deferredByError } from '../mta/outcome.ts';
import { DEFAULT_POOL_LIMITS } from '../mta/pool.ts';
import { settleAttempt, pendingRecipients, waitSettlement, type Settlement } from '../mta/settle.ts';
import { PoolsBySource, SourceAddressChooser, type SourceUse } from '../mta/source-address.ts';
import { addCountsStatement, IP_POOLS_CHANNEL } from '../mta/sql/pools.ts';
import {
  claimSpool,
  extendSpoolLeases,
  markSpoolAnswered,
  recordSpoolStatement,
  releaseSpool,
  SPOOL_CHANNEL,
  type SpooledRow,
  type SpoolRecipient,
} from '../mta/sql/spool.ts';
import { TlsPolicy } from '../mta/tls-policy.ts';
import { createLeasedBatchEngine, errorText, FixedLane, type Finished } from './leased-batch.ts';
import { runLeasedBatchLoop } from './leased-batch-loop.ts';
import type { ThreadRuntime } from './thread.ts';
import { createWaker, listenOnChannel } from './wake.ts';

const NOUN = 'spooled messages';
/** Rows one claim takes at most (one statement). */
const CLAIM_BATCH = 100;
/** Rows waiting in lanes or on the wire at once, over all destinations. */
const MAX_ACTIVE = 200;
/** Attempts one commit writes at most. */
const COMMIT_BATCH_MAX = 100;
const COMMIT_LINGER_MS = 5;
const ERROR_PAUSE_MS = 1_000;
/** A destination unused this long closes its pool. */
const IDLE_LANE_MS = 60_000;
/** Rows a destination may keep waiting beyond its connections. */
const WAITING_PER_DESTINATION = DEFAULT_POOL_LIMITS.maxConnections * 2;

/**
 * One destination domain: its rows run up to its pool's connection limit, one transaction each; its
 * connections are kept per source address (IP pools, mta/source-address.ts).
 */
class DestinationLane extends FixedLane<SpooledRow> {
  constructor(
    key: string,
    readonly pools: PoolsBySource,
  ) {
    super(key, DEFAULT_POOL_LIMITS.maxConnections, WAITING_PER_DESTINATION);
  }

  override close(): void {
    this.pools.close();
  }
}

/** What an attempt did: the recipients' verdicts and the pool address it left from, if any. */
interface Attempted {
  results: RecipientResult[];
  source: SourceUse | null;
}

export async function runMtaLoop(runtime: ThreadRuntime): Promise<void> {
  const { ctx, tuning, signal } = runtime;
  const { sql, log, workerId, config, sequelize } = ctx;
  const dns = createDnsClient({ servers: config.dnsServers });
  const routes = new RouteCache(dns);
  const tlsPolicy = new TlsPolicy(dns);
  const session = { ehloName: config.ehloName, localAddress: config.outboundAddress ?? undefined };
  const outcomeDeps = { sequelize, config, secrets: ctx.secrets };
  const sources = new SourceAddressChooser({ sql, fallback: session });

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
      await markSpoolAnswered(sql, row.id, workerId, marked);
    } catch (error) {
      log.warn({ err: errorText(error), id: row.id }, 'could not mark an answered spool row');
    }
  };

  const attempt = async (row: SpooledRow, lane: DestinationLane): Promise<Attempted | Settlement> => {
    const to = pendingRecipients(row);
    // Reclaimed with every recipient answered before a crash: nothing to send, settle() records them.
    if (to.length === 0) return { results: [], source: null };
    const all = (verdict: RecipientResult['verdict']) => ({
      results: to.map((address) => ({ address, verdict })),
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
    const source = await sources.choose(
      row,
      route.hosts.map((host) => host.name),
      to.length,
    );
    if (source.kind === 'wait')
      // Waiting past the row's expiry would never try it again: a deferral instead, which expires it in time.
      return source.until < row.expiresAt ? waitSettlement(row, source) : all(deferredByError(source.reason));
    const use = source.kind === 'address' ? source.use : null;
    const tls = await tlsPolicy.forDestination(row.domain, route);
    const marked = [...row.recipients];
    let report;
    try {
      report = await lane.pools
        .for(source.session)
        .deliver(route.hosts, tls.plan, { from: row.envelopeFrom, to }, row.message, (results) =>
          markAnswered(row, marked, results),
        );
    } catch (error) {
      if (use) sources.unused(use);
      throw error;
    }
    // No MX host answered: nothing reached the provider, nothing counts toward the warm-up.
    if (use && report.host === null) sources.unused(use);
    return { results: report.recipients, source: report.host === null ? null : use };
  };

  const run = async (row: SpooledRow, lane: DestinationLane): Promise<Settlement> => {
    let attempted: Attempted | Settlement;
    try {
      attempted = await attempt(row, lane);
    } catch (error) {
      // Not an answer from the destination (a bug, a DNS socket error): try again later.
      attempted = {
        results: pendingRecipients(row).map((address) => ({ address, verdict: deferredByError(errorText(error)) })),
        source: null,
      };
    }
    if ('spool' in attempted) return attempted;
    return {
      ...settleAttempt(row, attempted.results, { retryBaseMs: config.sendRetryBaseMs }),
      source: attempted.source,
    };
  };

  // One transaction: the rows and their outcomes are written together, so a crash neither loses an
  // outcome nor leaves a finished row to be sent again.
  const commit = async (batch: Array<Finished<SpooledRow, Settlement>>): Promise<void> => {
    const settlements = batch.map(({ outcome }) => outcome);
    const written = await sequelize.transaction(async (transaction) => {
      const statement = recordSpoolStatement(
        settlements.map((s) => s.spool),
        workerId,
      );
      const rows = await sequelize.query<{ id: string }>(statement.text, {
        bind: statement.values,
        type: QueryTypes.SELECT,
        transaction,
      });
      const recorded = new Set(rows.map((row) => row.id));
      // Sent is sent, whether or not this worker still held the row: every attempt's count goes in.
      const counts = addCountsStatement(settlements.flatMap((s) => (s.source ? [s.source] : [])));
      if (counts) await sequelize.query(counts.text, { bind: counts.values, transaction });
      for (const settlement of settlements) {
        if (!recorded.has(settlement.spool.id)) continue;
        for (const outcome of settlement.outcomes) await recordDeliveryOutcome(outcomeDeps, outcome, transaction);
        const { deferral } = settlement;
        if (deferral)
          await recordEmailEvent(
            sequelize,
            {
              tenantId: deferral.tenantId,
              emailId: deferral.emailId,
              type: 'deferred',
              data: { recipients: deferral.recipients, response: deferral.response, retryAt: deferral.retryAt },
            },
            transaction,
          );
      }
      return recorded.size;
    });
    sources.committed(settlements.flatMap((s) => (s.source ? [s.source] : [])));
    if (written < batch.length)
      log.warn({ lost: batch.length - written }, `${NOUN} finished after their lease was lost`);
  };

  const engine = createLeasedBatchEngine<SpooledRow, Settlement, DestinationLane>({
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
    newLane: (domain) => new DestinationLane(domain, new PoolsBySource(DEFAULT_POOL_LIMITS)),
    newLaneRoom: DEFAULT_POOL_LIMITS.maxConnections + WAITING_PER_DESTINATION,
    claim: (want, lanes) => claimSpool(sql, workerId, tuning.leaseMs, lanes.full, want),
    extend: (rows) =>
      extendSpoolLeases(
        sql,
        rows.map((row) => row.id),
        workerId,
        tuning.leaseMs,
      ),
    release: (rows, until) =>
      releaseSpool(
        sql,
        rows.map((row) => row.id),
        workerId,
        until ?? null,
      ),
    run,
    commit,
  });

  const waker = createWaker();
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
      claimErrorPauseMs: ERROR_PAUSE_MS,
      drainTimeoutMs: tuning.drainTimeoutMs,
    });
  } finally {
    await listener?.close();
    await poolListener?.close();
    poolChanges.close();
  }
}
