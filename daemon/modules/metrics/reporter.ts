// How a thread's figures reach the /metrics of its node. The send, MTA and webhook threads count
// into a reporter of their own (created by jobs/thread.ts); the reporter posts what it counted since
// its previous post, at most once a second, on a BroadcastChannel that every thread of the process
// shares (the way mta/spooled-messages.ts hands messages between threads), and the node's registry
// (registry.ts, in the API thread) adds it to its prom-client metrics.
//
// Why deltas pushed to one registry, rather than a registry per thread that the API thread would
// collect at scrape time: counters must only grow, and a thread that dies is started again with
// nothing counted; deltas already added in the API thread survive it (a dying thread loses what it
// counted in its last second, at most). A scrape then asks no thread anything. Gauges (the MTA's open
// connections) are posted whole at every post and dropped by the registry when their thread stops
// posting. Counting is a Map update: O(1), nothing crosses threads per message.
import { randomUUID } from 'node:crypto';
import { BroadcastChannel, threadId } from 'node:worker_threads';
import { LABELS, METRIC } from './catalogue.ts';

/** The channel every thread of this process posts its figures on. */
export const METRICS_CHANNEL = 'svc:metrics';
/** How often a thread posts what it counted. */
export const REPORT_INTERVAL_MS = 1_000;
/** Observations a thread keeps before posting early (bounds its memory under a burst). */
const MAX_PENDING_OBSERVATIONS = 5_000;

export type CountedFamily = typeof METRIC.deliveries | typeof METRIC.webhookDeliveries;
export type ObservedFamily = typeof METRIC.webhookLag;
export type GaugeFamily = typeof METRIC.mtaConnections;

/** One post: what a thread counted since its previous one, and its gauges' current values. */
export interface MetricsReport {
  /** The posting reporter (thread id and a random part: a thread started again is another source). */
  source: string;
  counts: Array<[family: string, labels: string[], n: number]>;
  observations: Array<[family: string, labels: string[], values: number[]]>;
  gauges: Array<[family: string, labels: string[], value: number]>;
}

export interface GaugeSample {
  labels: string[];
  value: number;
}

export interface MetricsReporter {
  count(family: CountedFamily, labels: readonly string[], n?: number): void;
  observe(family: ObservedFamily, labels: readonly string[], value: number): void;
  /** A gauge read at each post; the returned function stops reading it. */
  gauge(family: GaugeFamily, read: () => GaugeSample[]): () => void;
  /** Posts now what is pending. */
  flush(): void;
  /** Posts what is pending and stops. */
  close(): void;
}

const SEPARATOR = '\u0000';

/** Checks a label list against the catalogue (a wrong count would be refused by the registry anyway). */
function checked(family: string, labels: readonly string[]): readonly string[] {
  const names = (LABELS as Record<string, readonly string[]>)[family];
  if (!names || names.length !== labels.length)
    throw new Error(`metrics: ${family} takes ${names?.length ?? 0} labels, got ${labels.length}`);
  return labels;
}

export function createMetricsReporter(): MetricsReporter {
  const source = `${threadId}:${randomUUID()}`;
  const channel = new BroadcastChannel(METRICS_CHANNEL);
  // A BroadcastChannel keeps its thread alive: the thread's own work decides when it ends.
  channel.unref();
  let counts = new Map<string, { family: string; labels: string[]; n: number }>();
  let observations = new Map<string, { family: string; labels: string[]; values: number[] }>();
  let pending = 0;
  const gauges = new Map<number, { family: string; read: () => GaugeSample[] }>();
  let gaugeIds = 0;
  let closed = false;

  const flush = () => {
    if (closed) return;
    const report: MetricsReport = { source, counts: [], observations: [], gauges: [] };
    for (const entry of counts.values()) report.counts.push([entry.family, entry.labels, entry.n]);
    for (const entry of observations.values()) report.observations.push([entry.family, entry.labels, entry.values]);
    for (const gauge of gauges.values())
      for (const sample of gauge.read()) report.gauges.push([gauge.family, sample.labels, sample.value]);
    counts = new Map();
    observations = new Map();
    pending = 0;
    if (report.counts.length || report.observations.length || report.gauges.length) channel.postMessage(report);
  };
  const timer = setInterval(flush, REPORT_INTERVAL_MS);
  timer.unref();

  return {
    count(family, labels, n = 1) {
      if (closed || n <= 0) return;
      const key = family + SEPARATOR + labels.join(SEPARATOR);
      const entry = counts.get(key);
      if (entry) entry.n += n;
      else counts.set(key, { family, labels: [...checked(family, labels)], n });
    },
    observe(family, labels, value) {
      if (closed || !Number.isFinite(value)) return;
      const key = family + SEPARATOR + labels.join(SEPARATOR);
      const entry = observations.get(key);
      if (entry) entry.values.push(value);
      else observations.set(key, { family, labels: [...checked(family, labels)], values: [value] });
      pending += 1;
      if (pending >= MAX_PENDING_OBSERVATIONS) flush();
    },
    gauge(family, read) {
      const id = (gaugeIds += 1);
      gauges.set(id, { family, read });
      return () => gauges.delete(id);
    },
    flush,
    close() {
      if (closed) return;
      clearInterval(timer);
      gauges.clear();
      flush();
      closed = true;
      channel.close();
    },
  };
}
