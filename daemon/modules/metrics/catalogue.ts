// The names, labels and buckets of what this daemon counts for /metrics (docs/metrics.md), shared by
// the node's registry (registry.ts) and the worker threads that report into it (reporter.ts). Names
// follow Prometheus's conventions (base units, `_total` on counters) and, for mail, the figures
// KumoMTA's and Postfix's exporters give: outcomes per recipient (KumoMTA's total_messages_delivered,
// _transfail, _fail), connections per provider (connection_count_by_provider), queue sizes and the
// age of the oldest item per queue (Postfix's showq age).

/** What became of a recipient of a send. */
export const DELIVERY_OUTCOMES = ['delivered', 'deferred', 'bounced', 'failed', 'complained'] as const;
export type DeliveryOutcomeLabel = (typeof DELIVERY_OUTCOMES)[number];

/**
 * How it left: `relay` (SMTP_URL or a project's own relay), `capture` (no relay: kept, nothing left),
 * `direct` (the outbound MTA, with the provider its MX hosts matched), `report` (a bounce or complaint
 * a provider reported later).
 */
export const DELIVERY_ROUTES = ['relay', 'capture', 'direct', 'report'] as const;
export type DeliveryRoute = (typeof DELIVERY_ROUTES)[number];

export const METRIC = {
  deliveries: 'svc_delivery_outcomes_total',
  webhookDeliveries: 'svc_webhook_deliveries_total',
  webhookLag: 'svc_webhook_delivery_lag_seconds',
  mtaConnections: 'svc_mta_connections',
} as const;

/** Label names of each reported family, in order. */
export const LABELS = {
  [METRIC.deliveries]: ['outcome', 'route', 'provider'],
  [METRIC.webhookDeliveries]: ['outcome'],
  [METRIC.webhookLag]: [],
  [METRIC.mtaConnections]: ['provider'],
} as const;

/**
 * Event-loop delay (seconds): fine below 150 ms, where "nothing blocks the loop" is judged (the inbound
 * tests' bounds of 60 and 100 ms are bounds here, so a delay read from the buckets is judged as exactly).
 */
export const EVENT_LOOP_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.06, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5, 10,
];
/** API latency (seconds). */
export const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** From a webhook event to its receiver's 2xx (seconds): from "at once" to retries over a day. */
export const WEBHOOK_LAG_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21_600, 86_400];
