// The node's Prometheus registry (prom-client), created by buildApp (or by main.ts on a node without
// the API that serves metrics on METRICS_PORT), closed with it. Reading it changes nothing: counters
// only grow, delays and latencies are histograms whose buckets only grow, gauges say what is now.
//
// Where each figure comes from:
// - this process (prom-client's default metrics: CPU, memory, heap, GC, handles; the event-loop
//   histogram; API latency, one observe per request in buildApp's onResponse hook);
// - this node's worker threads, which count in their own threads and post the counts here
//   (reporter.ts says why deltas over a BroadcastChannel): delivery outcomes, webhook deliveries and
//   their lag, the MTA's open connections;
// - PostgreSQL, for what every node shares: queue depths (queue-depth.ts, bounded and cached) and
//   the inbound reports kept without effect.
import { errorText } from '../../errors.ts';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { BroadcastChannel } from 'node:worker_threads';
import type { Sequelize } from 'sequelize';
import type { Config } from '../../config.ts';
import type { Sql } from '../../db/sql.ts';
import { cachedLoad, TtlCache } from '../../ttl-cache.ts';
import { countKeptReports } from '../inbound/kept-reports.ts';
import { KEPT_REPORT_DISPOSITIONS } from '../../../shared/schemas/inbound-reports.ts';
import {
  DELIVERY_OUTCOMES,
  EVENT_LOOP_BUCKETS,
  HTTP_BUCKETS,
  LABELS,
  METRIC,
  WEBHOOK_LAG_BUCKETS,
  type DeliveryRoute,
} from './catalogue.ts';
import { EVENT_LOOP_SAMPLE_MS, type EventLoopMonitor } from './event-loop.ts';
import { createQueueDepthReader } from './queue-depth.ts';
import { readResolverHealth } from '../../mta/sql/resolver-health.ts';
import { METRICS_CHANNEL, REPORT_INTERVAL_MS, type MetricsReport, type MetricsReporter } from './reporter.ts';

/**
 * The kept-report counts are a GROUP BY over a table that strangers can grow: a node reads them at most
 * this often, however often it is scraped.
 */
const KEPT_REPORT_COUNTS_TTL_MS = 15_000;
/** A thread's gauges count while its posts keep coming; a thread gone quiet this long is gone. */
const GAUGE_STALE_MS = REPORT_INTERVAL_MS * 5;
/**
 * prom-client's own event-loop figures are gauges that each scrape resets (its collect() resets its
 * histogram): a stall seen by one scraper is gone for the next. They are replaced by
 * svc_event_loop_delay_seconds; their sampler is slowed to once a second, since nothing reads it.
 */
const RESETTING_DEFAULTS = [
  'nodejs_eventloop_lag_seconds',
  'nodejs_eventloop_lag_min_seconds',
  'nodejs_eventloop_lag_max_seconds',
  'nodejs_eventloop_lag_mean_seconds',
  'nodejs_eventloop_lag_stddev_seconds',
  'nodejs_eventloop_lag_p50_seconds',
  'nodejs_eventloop_lag_p90_seconds',
  'nodejs_eventloop_lag_p99_seconds',
];
const WEBHOOK_OUTCOMES = ['succeeded', 'failed', 'retried', 'skipped'] as const;

export interface NodeMetricsDeps {
  config: Pick<Config, 'delivery' | 'smtpUrl'>;
  db: { sql: Sql; sequelize: Sequelize };
  eventLoop: EventLoopMonitor;
  log: { warn(details: object, message: string): void };
}

export interface NodeMetrics {
  readonly contentType: string;
  /** The exposition text (Prometheus text format 0.0.4). */
  render(): Promise<string>;
  /** One API request: its route's pattern (not its URL: bounded labels), status and time. */
  observeRequest(method: string, route: string | undefined, statusCode: number, elapsedMs: number): void;
  /** Counts in this thread, as a worker thread's reporter would post it (the API's report receivers). */
  count: MetricsReporter['count'];
  /** Starts the event-loop histogram (from the moment the node serves: boot is not a stall). */
  startSampling(): void;
  close(): void;
}

/** The route a node's sends take when nothing else says: what the zero series are made for. */
function defaultRoute(config: NodeMetricsDeps['config']): DeliveryRoute {
  if (config.delivery === 'direct') return 'direct';
  return config.smtpUrl ? 'relay' : 'capture';
}

export function createNodeMetrics(deps: NodeMetricsDeps): NodeMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 1_000 });
  for (const name of RESETTING_DEFAULTS) registry.removeSingleMetric(name);
  const registers = [registry];

  const eventLoopDelay = new Histogram({
    name: 'svc_event_loop_delay_seconds',
    help: `How late a timer due every ${EVENT_LOOP_SAMPLE_MS} ms fired in this process's event loop (every request and SMTP session waits as long).`,
    buckets: EVENT_LOOP_BUCKETS,
    registers,
  });
  new Gauge({
    name: 'svc_event_loop_delay_recent_max_seconds',
    help: "Longest event-loop delay of this process over the last one to two minutes (svc doctor's window).",
    registers,
    collect() {
      this.set(deps.eventLoop.recent().maxMs / 1000);
    },
  });
  new Gauge({
    name: 'svc_event_loop_delay_recent_p99_seconds',
    help: "99th percentile of this process's event-loop delay over the last one to two minutes.",
    registers,
    collect() {
      this.set(deps.eventLoop.recent().p99Ms / 1000);
    },
  });

  const requests = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'API requests answered by this node, by method, route pattern and status, and how long each took.',
    labelNames: ['method', 'route', 'status_code'],
    buckets: HTTP_BUCKETS,
    registers,
  });

  const deliveries = new Counter({
    name: METRIC.deliveries,
    help: 'Recipients per outcome handled by this node: delivered, deferred (tried again later), bounced, failed (never left: refused by us or out of attempts), complained; by route (relay, capture, direct, report) and provider (the MTA’s provider rule; empty off the MTA).',
    labelNames: [...LABELS[METRIC.deliveries]],
    registers,
  });
  for (const outcome of DELIVERY_OUTCOMES)
    deliveries.inc(
      { outcome, route: defaultRoute(deps.config), provider: deps.config.delivery === 'direct' ? 'default' : '' },
      0,
    );
  const webhookDeliveries = new Counter({
    name: METRIC.webhookDeliveries,
    help: "Webhook delivery attempts settled by this node's workers: succeeded, failed (for good), retried (a retry is due), skipped (endpoint off).",
    labelNames: [...LABELS[METRIC.webhookDeliveries]],
    registers,
  });
  for (const outcome of WEBHOOK_OUTCOMES) webhookDeliveries.inc({ outcome }, 0);
  const webhookLag = new Histogram({
    name: METRIC.webhookLag,
    help: 'From a webhook event to the 2xx of its receiver, retries included (deliveries that succeeded on this node).',
    buckets: WEBHOOK_LAG_BUCKETS,
    registers,
  });

  // Gauges posted whole by each thread; the registry sums the fresh ones at each scrape.
  const gaugeSamples = new Map<string, { at: number; samples: MetricsReport['gauges'] }>();
  new Gauge({
    name: METRIC.mtaConnections,
    help: "SMTP connections this node's outbound MTA holds open now (in use or idle), by provider.",
    labelNames: [...LABELS[METRIC.mtaConnections]],
    registers,
    collect() {
      this.reset();
      const now = Date.now();
      const sums = new Map<string, number>();
      for (const [source, posted] of gaugeSamples) {
        if (now - posted.at > GAUGE_STALE_MS) {
          gaugeSamples.delete(source);
          continue;
        }
        for (const [family, labels, value] of posted.samples)
          if (family === METRIC.mtaConnections) sums.set(labels[0], (sums.get(labels[0]) ?? 0) + value);
      }
      for (const [provider, value] of sums) this.set({ provider }, value);
    },
  });

  const readDepths = createQueueDepthReader(deps.db.sql);
  const depthLoad = async () => {
    try {
      return await readDepths();
    } catch (error) {
      deps.log.warn({ err: errorText(error) }, 'metrics: queue depths unread');
      return null;
    }
  };
  new Gauge({
    name: 'svc_queue_depth',
    help: 'Items per queue, shared by every node (read from PostgreSQL, at most every 2 s): ready (due, waiting for a worker), scheduled (waiting for a retry or a send time), running (held by a worker). Each count stops at 10000.',
    labelNames: ['queue', 'state'],
    registers,
    async collect() {
      const depths = await depthLoad();
      this.reset();
      for (const depth of depths ?? []) {
        this.set({ queue: depth.queue, state: 'ready' }, depth.ready);
        this.set({ queue: depth.queue, state: 'scheduled' }, depth.scheduled);
        this.set({ queue: depth.queue, state: 'running' }, depth.running);
      }
    },
  });
  new Gauge({
    name: 'svc_queue_oldest_ready_age_seconds',
    help: 'How long the oldest ready item of each queue has been due (0: none waits). Growing: no worker takes it.',
    labelNames: ['queue'],
    registers,
    async collect() {
      const depths = await depthLoad();
      this.reset();
      for (const depth of depths ?? []) this.set({ queue: depth.queue }, depth.oldestReadySeconds);
    },
  });

  // The MTA's resolver per direct-delivery node (mta/resolver-health.ts, issue 49 §3): one fault, one series.
  new Gauge({
    name: 'svc_mta_resolver_healthy',
    help: "1 when the node's resolver resolves the canary names (DNS_CANARY_NAMES), 0 when not: its mail is deferred (never bounced) until it does. Read from PostgreSQL, every node's.",
    labelNames: ['node'],
    registers,
    async collect() {
      this.reset();
      try {
        for (const node of await readResolverHealth(deps.db.sql)) this.set({ node: node.node }, node.healthy ? 1 : 0);
      } catch (error) {
        deps.log.warn({ err: errorText(error) }, 'metrics: resolver health unread');
      }
    },
  });

  const keptCounts = new TtlCache<Promise<Awaited<ReturnType<typeof countKeptReports>>>>(KEPT_REPORT_COUNTS_TTL_MS, 1);
  new Counter({
    name: 'svc_inbound_reports_kept_total',
    help: 'Bounce and complaint reports kept without effect (unmatched: no recipient of the send; unverified: ARF at fbl@ not signed by a feedback-loop operator), every node’s (rows in PostgreSQL).',
    labelNames: ['disposition', 'kind'],
    registers,
    async collect() {
      let counts;
      try {
        counts = await cachedLoad(keptCounts, 'counts', () => countKeptReports(deps.db.sequelize));
      } catch (error) {
        deps.log.warn({ err: errorText(error) }, 'metrics: kept reports unread');
        this.reset();
        return;
      }
      // The rows are the count: set from them, every disposition and kind, zero included, so a rate()
      // over them starts from the first scrape.
      this.reset();
      for (const disposition of KEPT_REPORT_DISPOSITIONS)
        for (const kind of ['bounce', 'complaint']) {
          const count = counts.find((c) => c.disposition === disposition && c.kind === kind)?.count ?? 0;
          this.inc({ disposition, kind }, count);
        }
    },
  });

  const count = (family: string, labels: readonly string[], n = 1) => {
    if (family === METRIC.deliveries) {
      const [outcome, route, provider] = labels;
      deliveries.inc({ outcome, route, provider }, n);
    } else if (family === METRIC.webhookDeliveries) webhookDeliveries.inc({ outcome: labels[0] }, n);
  };

  // The threads' posts. A report that does not fit the catalogue is dropped (and logged): a bug, not input.
  const channel = new BroadcastChannel(METRICS_CHANNEL);
  channel.onmessage = (event) => {
    const report = (event as { data: MetricsReport }).data;
    try {
      for (const [family, labels, n] of report.counts) count(family, labels, n);
      for (const [family, , values] of report.observations)
        if (family === METRIC.webhookLag) for (const value of values) webhookLag.observe(value);
      // A post without gauges says its thread has none open now (its previous ones are over).
      gaugeSamples.set(report.source, { at: Date.now(), samples: report.gauges });
    } catch (error) {
      deps.log.warn({ err: errorText(error) }, 'metrics: a report was dropped');
    }
  };
  // After onmessage, which refs the channel: listening must not keep the process alive.
  channel.unref();

  let stopSampling: (() => void) | null = null;
  return {
    contentType: registry.contentType,
    render: () => registry.metrics(),
    count,
    observeRequest(method, route, statusCode, elapsedMs) {
      requests.observe({ method, route: route ?? 'unmatched', status_code: statusCode }, elapsedMs / 1000);
    },
    startSampling() {
      stopSampling ??= deps.eventLoop.sample((seconds) => eventLoopDelay.observe(seconds));
    },
    close() {
      stopSampling?.();
      channel.close();
      registry.clear();
    },
  };
}
