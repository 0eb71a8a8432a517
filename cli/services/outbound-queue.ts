// `svc queue` and its screen: the outbound MTA's queue per destination domain (GET /platform/queue) and
// the actions on one domain (retry, hold, release). Platform admins only; the daemon says 403 to others.
import chalk from 'chalk';
import type { SvcClient } from '../client.ts';
import { table } from '../format.ts';
import type {
  OutboundDestination,
  OutboundQueuePage,
  OutboundQueueQuery,
  RetryDestinationAnswer,
} from '../../shared/schemas/outbound-queue.ts';

const path = (domain: string, action: string) => `/platform/queue/${encodeURIComponent(domain)}/${action}`;

export const outboundQueue = {
  list: (client: SvcClient, query: OutboundQueueQuery = {}) =>
    client.http.request<OutboundQueuePage>('GET', '/platform/queue', { query, tenant: false }),
  retry: (client: SvcClient, domain: string) =>
    client.http.request<RetryDestinationAnswer>('POST', path(domain, 'retry'), { tenant: false }),
  hold: (client: SvcClient, domain: string, reason?: string) =>
    client.http.request<OutboundDestination>('POST', path(domain, 'hold'), {
      json: reason === undefined ? {} : { reason },
      tenant: false,
    }),
  release: (client: SvcClient, domain: string) =>
    client.http.request<OutboundDestination>('POST', path(domain, 'release'), { tenant: false }),
};

/**
 * 95 s → "1m 35s", 2 h 5 min → "2h 5m", 1 h 30 s → "1h 0m": the largest unit and the one after it (an hour
 * and 30 s read "1h 30s" before, which looked like a typo and broke the queue test's pattern once an hour).
 */
export function durationText(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  const units: [string, number][] = [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
    ['s', 1],
  ];
  const parts: string[] = [];
  let rest = seconds;
  for (const [name, size] of units) {
    if (rest >= size || parts.length === 1 || name === 's') {
      parts.push(`${Math.floor(rest / size)}${name}`);
      rest %= size;
    }
    if (parts.length === 2) break;
  }
  return parts.join(' ');
}

/** "in 4m 10s", "now" (due), or "—" when nothing is deferred. */
export function nextTryText(iso: string | null, now = Date.now()): string {
  if (!iso) return '—';
  const ms = new Date(iso).getTime() - now;
  return ms <= 0 ? 'now' : `in ${durationText(ms)}`;
}

export function ageText(iso: string | null, now = Date.now()): string {
  return iso ? durationText(now - new Date(iso).getTime()) : '—';
}

/** The state word of a destination: held, stuck, or nothing. */
export function destinationFlag(destination: OutboundDestination): string {
  if (destination.held) return `held${destination.holdReason ? ` (${destination.holdReason})` : ''}`;
  if (destination.stuck) return 'stuck';
  return '';
}

/** The human table of `svc queue`. */
export function queueTable(destinations: OutboundDestination[], now = Date.now()): string {
  return table(
    destinations,
    [
      { header: 'DOMAIN', value: (d) => d.domain },
      { header: 'QUEUED', value: (d) => String(d.queued) },
      { header: 'DEFERRED', value: (d) => String(d.deferred) },
      { header: 'IN FLIGHT', value: (d) => String(d.inFlight) },
      {
        header: 'WAITING',
        value: (d) => (d.waiting ? `${d.waiting} until ${nextTryText(d.waitUntil ?? null, now)}` : '0'),
      },
      { header: 'OLDEST', value: (d) => ageText(d.oldestAt, now) },
      { header: 'NEXT TRY', value: (d) => nextTryText(d.nextTryAt, now) },
      {
        header: 'STATE',
        value: (d) => (d.held ? chalk.yellow : chalk.red)(destinationFlag(d)),
      },
      { header: 'LAST RESPONSE', value: (d) => d.lastResponse ?? (d.waitReason ? `(ours) ${d.waitReason}` : '—') },
    ],
    'The outbound queue is empty: no mail waits for a destination and none is held.',
  );
}

/** One line per reaction in force: what a provider's reply made the MTA do, and until when. */
export function reactionLines(page: OutboundQueuePage, now = Date.now()): string[] {
  return page.reactions.map((reaction) => {
    const where = reaction.domain
      ? `${reaction.providerKey} ${reaction.domain}`
      : `${reaction.providerKey} (all its destinations)`;
    const what =
      reaction.kind === 'suspend'
        ? 'suspended'
        : reaction.kind === 'slow'
          ? `slowed ×${reaction.factor ?? 1}`
          : `tenant ${reaction.tenantId ?? '?'} paused`;
    const until = reaction.until ? ` until ${reaction.until} (${nextTryText(reaction.until, now)})` : '';
    return `reaction: ${where} ${what}${until} — ${reaction.reason}`;
  });
}

/** One line per node whose resolver fails its canaries: the one cause of every DNS deferral it shows. */
export function resolverLines(page: Pick<OutboundQueuePage, 'resolver'>, now = Date.now()): string[] {
  return (page.resolver ?? [])
    .filter((node) => !node.healthy)
    .map(
      (node) =>
        `resolver unhealthy on ${node.node} for ${ageText(node.since, now)}: ${node.lastError ?? 'canaries do not resolve'} — mail is deferred, not bounced (check DNS_SERVERS; svc doctor)`,
    );
}

/** One line per source address a node cannot bind: an alert, whatever the destinations show. */
export function sourceFaultLines(page: Pick<OutboundQueuePage, 'sourceFaults'>, now = Date.now()): string[] {
  return (page.sourceFaults ?? []).map(
    (fault) =>
      `source address ${fault.ip} cannot be bound on node ${fault.node} for ${ageText(fault.since, now)} — its pool's other addresses are used there (svc doctor --local on that node)`,
  );
}

/** A line for a daemon that does not deliver the spool itself. */
export function deliveryWarning(page: OutboundQueuePage): string | null {
  return page.delivery === 'direct'
    ? null
    : 'This daemon runs with DELIVERY=relay: the spool is delivered only by a node started with DELIVERY=direct.';
}
