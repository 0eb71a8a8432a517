// The outbound MTA's group commit: a batch of attempts (attempt.ts) written in one transaction, the
// spool rows (deleted when finished, deferred to retry.ts's time, given back) with what they mean for
// the rest of the service. What the modules above record (the recipients' outcomes and timeline in
// emails/outcomes.ts, the per-provider daily counts of modules/deliverability, the reaction's event,
// /metrics) is handed in as ports by jobs/mta-loop.ts: mta/ sits below the modules and imports none.
import type { Logger } from 'pino';
import type { Sequelize, Transaction } from 'sequelize';
import type { BoundStatement, Sql, TransactionStatements } from '../db/sql.ts';
import type { DeliveryOutcome } from '../mail/delivery-outcome.ts';
import type { Finished } from '../queue/leased-batch.ts';
import type { Attempted } from './attempt.ts';
import { recordReaction, type EmitEvent } from './reactions.ts';
import type { SourceAddressChooser } from './source-address.ts';
import { addCountsStatement } from './sql/pools.ts';
import { lockHeldSpoolStatement, recordSpoolStatement, type SpooledRow } from './sql/spool.ts';
import { recordTlsCountsStatement } from './sql/tls-report.ts';

/** The per-provider daily counts one batch adds to (modules/deliverability's DeliverabilityTally). */
export interface ProviderTally {
  /** `domain`'s MX hosts belong to `provider`: later reports for it count there. */
  sawProvider(domain: string, provider: string): void;
  add(tenantId: string, kind: 'deferred', recipients: readonly string[], provider: string | null): void;
}

/** A row of an email log's timeline the MTA writes: a wait of ours, or a destination's deferral. */
export interface SpoolTimelineRow {
  tenantId: string;
  emailId: string;
  type: 'waiting' | 'deferred';
  data: Record<string, unknown>;
}

/** What the modules record with a batch, in its transaction and after it (wired in jobs/mta-loop.ts). */
export interface SpoolCommitPorts<Tally extends ProviderTally> {
  newTally(): Tally;
  /** The recipients' outcomes and the logs' timelines (emails/outcomes.ts), counted into the tally. */
  recordOutcomes(
    input: {
      outcomes: DeliveryOutcome[];
      timeline: SpoolTimelineRow[];
      /** The logs this batch attempted, each with the spool row that keeps its fields. */
      spooled: Map<string, string>;
      workerId: string;
    },
    within: { transaction: Transaction; run: TransactionStatements; tally: Tally },
  ): Promise<void>;
  /** Writes the tally: once, last, for the whole batch. */
  flushTally(run: TransactionStatements, tally: Tally): Promise<void>;
  /** A new reaction's event and webhooks for its tenant (reactions.ts). */
  emitEvent: EmitEvent;
  /** Counts one recorded attempt for /metrics, once the transaction has committed. */
  countAttempt(provider: string | null, outcomes: readonly DeliveryOutcome[], deferredRecipients: number): void;
}

export interface SpoolCommitDeps<Tally extends ProviderTally> {
  sql: Sql;
  sequelize: Sequelize;
  log: Logger;
  workerId: string;
  sources: Pick<SourceAddressChooser, 'committed'>;
  /** Asks the loop for a claim when a row this batch wrote falls due (queue/wake.ts WakeTimer). */
  wakeAt(at: Date): void;
  ports: SpoolCommitPorts<Tally>;
}

/** The engine's `commit` for spool rows. A throw rolls the whole batch back; the engine tries it again. */
export function createSpoolCommit<Tally extends ProviderTally>(
  deps: SpoolCommitDeps<Tally>,
): (batch: Array<Finished<SpooledRow, Attempted>>) => Promise<void> {
  const { sql, sequelize, log, workerId, sources, ports } = deps;

  // One transaction: the rows and their outcomes are written together, so a crash neither loses an
  // outcome nor leaves a finished row to be sent again. The rows still held are locked first and their
  // outcomes recorded before the rows are: a delivery's log takes the fields its row keeps
  // (sql/spooled-log-columns.ts) from the row before it is deleted.
  return async (batch) => {
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
      const tally = ports.newTally();
      const outcomes: DeliveryOutcome[] = [];
      const timeline: SpoolTimelineRow[] = [];
      const spooled = new Map<string, string>();
      for (const { item: row, outcome: settlement } of batch) {
        if (!held.has(settlement.spool.id)) continue;
        recorded.push(settlement);
        const provider = settlement.provider ?? undefined;
        if (provider) tally.sawProvider(settlement.domain, provider);
        for (const outcome of settlement.outcomes) outcomes.push({ ...outcome, provider });
        if (settlement.reaction) await recordReaction(sequelize, settlement.reaction, transaction, ports.emitEvent);
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
      await ports.recordOutcomes({ outcomes, timeline, spooled, workerId }, { transaction, run, tally });
      const rows = await runBound<{ id: string }>(
        recordSpoolStatement(
          settlements.filter((s) => held.has(s.spool.id)).map((s) => s.spool),
          workerId,
        ),
      );
      await ports.flushTally(run, tally);
      return rows.length;
    });
    sources.committed(settlements.flatMap((s) => (s.source ? [s.source] : [])));
    // A warm-up wait or a row shaping gave back was no attempt: only a deferred row's recipients were deferred.
    for (const s of recorded)
      ports.countAttempt(
        s.provider,
        s.outcomes,
        s.spool.state === 'deferred' ? (s.deferral?.recipients.length ?? 0) : 0,
      );
    for (const { spool } of settlements) if (spool.runAt) deps.wakeAt(spool.runAt);
    if (written < batch.length)
      log.warn({ lost: batch.length - written }, `spooled messages finished after their lease was lost`);
  };
}
