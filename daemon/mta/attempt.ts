// One attempt of one spool row, as the outbound MTA's lane runs it (mta/lane.ts, on the leased-batch
// engine wired by jobs/mta-loop.ts): route the row (mx.ts), choose its source address (source-address.ts),
// ask shaping (shaping.ts) whether it may go now and over which provider's pool, deliver under the TLS
// policy of each MX host (tls-policy.ts), and answer what the batch's commit (commit.ts) writes: the
// row's settlement (settle.ts) with the reaction the reply set off and the TLS sessions it saw.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { errorText } from '../errors.ts';
import type { RecipientResult } from './connection.ts';
import type { DestinationLane } from './lane.ts';
import type { RouteCache } from './mx.ts';
import { deferredByError } from './outcome.ts';
import { releasedSettlement, settleAttempt, pendingRecipients, waitSettlement, type Settlement } from './settle.ts';
import type { Shaper } from './shaping.ts';
import type { SourceAddressChooser, SourceUse } from './source-address.ts';
import type { SourceFaults } from './source-faults.ts';
import type { ReactionRecord } from './sql/reactions.ts';
import type { SpoolAnsweredMarks, SpooledRow, SpoolRecipient } from './sql/spool.ts';
import { reportMailTls, type TlsPolicy } from './tls-policy.ts';
import { isTlsReportMail, tlsSessionsOf, type TlsSession } from './tls-report.ts';

/** A settlement with the reaction it set off and the provider its MX hosts belong to (for the deliverability rollup). */
export type Attempted = Settlement & { reaction: ReactionRecord | null; domain: string; provider: string | null };

/** An attempt's replies, or shaping's answer that the row may not go before `later`. */
type Tried =
  | { results: RecipientResult[]; provider: string | null; source: SourceUse | null }
  | { later: Date; reason?: string }
  | { waiting: Settlement };

export interface SpoolAttemptDeps {
  log: Logger;
  config: Pick<Config, 'outboundAddress' | 'sendRetryBaseMs'>;
  routes: RouteCache;
  tlsPolicy: TlsPolicy;
  shaper: Shaper;
  sources: SourceAddressChooser;
  sourceFaults: SourceFaults;
  answeredMarks: SpoolAnsweredMarks;
}

/** The engine's `run` for spool rows: never throws (an error of ours defers the row's recipients). */
export function createSpoolAttempt(
  deps: SpoolAttemptDeps,
): (row: SpooledRow, lane: DestinationLane) => Promise<Attempted> {
  const { log, config, routes, tlsPolicy, shaper, sources, sourceFaults, answeredMarks } = deps;

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
    // and a pool's address is left out here so the row goes at once from another (source-faults.ts).
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
      // What the provider refused counts against the warm-up's ramp (warmup.ts WARMUP_HOLD).
      source:
        report.host === null || !use
          ? null
          : { ...use, refused: report.recipients.filter((r) => r.verdict.kind !== 'delivered').length },
    };
  };

  return async (row, lane) => {
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
}
