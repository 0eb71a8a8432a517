// The MX sinks' control client for `npm run bench:mta` and the figures of one column: rate from the
// first submission to the last message received, accept → received latency, per-domain completion.
import type { Child } from './children.ts';
import type { Injection } from './mta-inject.ts';
import { NORMAL_DOMAINS } from './mta-message.ts';
import type { SinkBehaviour, SinkStats } from './mta-sinks.ts';

export class SinksClient {
  constructor(
    readonly child: Child,
    private readonly port: number,
  ) {}

  private async call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const response = await fetch(`http://127.0.0.1:${this.port}${path}`, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return (await response.json()) as T;
  }

  stats = () => this.call<SinkStats>('GET', '/stats');
  arrivals = () => this.call<Record<string, number>>('GET', '/arrivals');
  reset = () => this.call('POST', '/reset');
  behave = (behaviours: SinkBehaviour[]) => this.call('POST', '/behaviours', behaviours);

  /**
   * Waits until `count` distinct messages arrived; gives up when nothing arrives for `stallMs`. `during`
   * sees every poll's counts (every 250 ms), `progress` one every 10 s.
   */
  async waitForUnique(
    count: number,
    stallMs: number,
    progress: (stats: SinkStats) => void,
    during?: (stats: SinkStats) => void,
  ): Promise<SinkStats> {
    let last = -1;
    let lastChange = Date.now();
    let lastReport = 0;
    for (;;) {
      const stats = await this.stats();
      if (stats.unique >= count) return stats;
      during?.(stats);
      if (stats.unique !== last) {
        last = stats.unique;
        lastChange = Date.now();
      } else if (Date.now() - lastChange > stallMs) {
        throw new Error(`the sinks stalled at ${stats.unique} of ${count} messages for ${stallMs / 1000} s`);
      }
      if (Date.now() - lastReport > 10_000) {
        lastReport = Date.now();
        progress(stats);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

export interface ColumnFigures {
  label: string;
  version: string | null;
  messages: number;
  /** First submission → last message received (retries of the deferred ones included). */
  seconds: number;
  messagesPerSecond: number;
  /** First submission → last acceptance by the injector. */
  injectSeconds: number;
  /** First submission → last message of the eight normal (fast) domains. */
  normalDomainsSeconds: number;
  latencyP50Ms: number | null;
  latencyP99Ms: number | null;
  averageMessageBytes: number;
  duplicates: number;
  /** Messages that arrived with a DKIM-Signature (every one, in every column, when the signing works). */
  signed: number;
  /** 451s the deferring sink gave (each retried). */
  deferrals: number;
  perDomainSeconds: Record<string, number | null>;
  /** Counted at the sinks: the most connections one MX host had open at once, the most messages one carried. */
  maxConnectionsPerMx: number;
  maxMessagesPerConnection: number;
  /** Messages per EHLO name: per node when the worker nodes say different names. */
  byHelo: Record<string, number>;
  /** CPU of the measured processes per message (Linux; svc: API and worker nodes), when known. */
  cpuMsPerMessage: number | null;
  /** svc: the same split per node, in the order the column names them (e.g. edge, worker). */
  cpuMsPerMessageByNode?: number[] | null;
  /**
   * svc: CPU per message of the PostgreSQL backends connected to the bench database (their /proc
   * figures, start to end of the column; the server's shared processes, WAL writer and checkpointer, not included).
   */
  postgresCpuMsPerMessage?: number | null;
  loadAverageBefore: number[];
  loadAverageAfter: number[];
  notes: string[];
}

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export function columnFigures(
  label: string,
  version: string | null,
  injection: Injection,
  stats: SinkStats,
  arrivals: Record<string, number>,
  extra: Pick<
    ColumnFigures,
    | 'cpuMsPerMessage'
    | 'cpuMsPerMessageByNode'
    | 'postgresCpuMsPerMessage'
    | 'loadAverageBefore'
    | 'loadAverageAfter'
    | 'notes'
  >,
): ColumnFigures {
  const domains = Object.entries(stats.byDomain);
  const last = Math.max(...domains.map(([, d]) => d.last ?? 0));
  const normalLast = Math.max(...domains.filter(([name]) => NORMAL_DOMAINS.includes(name)).map(([, d]) => d.last ?? 0));
  const latencies: number[] = [];
  for (const [id, acceptedAt] of injection.acceptedAt) {
    const at = arrivals[id];
    if (at !== undefined) latencies.push(at - acceptedAt);
  }
  latencies.sort((a, b) => a - b);
  const seconds = (last - injection.startedAt) / 1000;
  const bytes = domains.reduce((sum, [, d]) => sum + d.bytes, 0);
  return {
    label,
    version,
    messages: stats.unique,
    seconds: round(seconds, 2),
    messagesPerSecond: round(stats.unique / seconds, 0),
    injectSeconds: round((injection.finishedAt - injection.startedAt) / 1000, 2),
    normalDomainsSeconds: round((normalLast - injection.startedAt) / 1000, 2),
    latencyP50Ms: latencies.length ? Math.round(percentile(latencies, 50)!) : null,
    latencyP99Ms: latencies.length ? Math.round(percentile(latencies, 99)!) : null,
    averageMessageBytes: Math.round(bytes / Math.max(1, stats.total)),
    duplicates: stats.duplicates,
    signed: stats.signed,
    deferrals: domains.reduce((sum, [, d]) => sum + d.deferredRcpts, 0),
    perDomainSeconds: Object.fromEntries(
      domains.map(([name, d]) => [name, d.last === null ? null : round((d.last - injection.startedAt) / 1000, 2)]),
    ),
    maxConnectionsPerMx: Math.max(...domains.map(([, d]) => d.maxConnections)),
    maxMessagesPerConnection: Math.max(...domains.map(([, d]) => d.maxMessagesPerConnection)),
    byHelo: stats.byHelo,
    ...extra,
  };
}
