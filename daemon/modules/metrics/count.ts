// What each delivery path counts (catalogue.ts), as pure functions of what the path already has: the
// relay drain's attempt results (jobs/send-loop.ts), the MTA's settlements (mta/commit.ts), the
// webhook outcomes (jobs/webhook-loops.ts). Each is called once a batch is recorded, so what is
// counted is what the database says happened.
import type { AttemptResult } from '../emails/send-job.ts';
import type { RawSendLog } from '../emails/drain.ts';
import type { DeliveryOutcome as MtaOutcome } from '../../mail/delivery-outcome.ts';
import type { DeliveryOutcome as WebhookOutcome } from '../webhooks/attempt.ts';
import { METRIC, type DeliveryOutcomeLabel } from './catalogue.ts';
import type { MetricsReporter } from './reporter.ts';

/** One relay (or capture) attempt of a log: every recipient gets one outcome. */
export function countRelayAttempt(
  metrics: Pick<MetricsReporter, 'count'>,
  log: RawSendLog,
  result: AttemptResult,
): void {
  // Handed to the outbound MTA's spool: not an outcome yet (the MTA counts it when it delivers).
  if (result.log === null) return;
  const recipients = log.to_addresses.length + log.cc_addresses.length + log.bcc_addresses.length;
  const route = result.log.captured ? 'capture' : 'relay';
  const bounced = result.bounces.reduce((sum, bounce) => sum + (bounce.recipients?.length ?? 0), 0);
  const count = (outcome: DeliveryOutcomeLabel, n: number) => {
    if (n > 0) metrics.count(METRIC.deliveries, [outcome, route, ''], n);
  };
  switch (result.status.status) {
    case 'SENT':
      count('delivered', recipients - bounced);
      count('bounced', bounced);
      return;
    case 'BOUNCED':
      count('bounced', bounced);
      count('failed', recipients - bounced);
      return;
    case 'RETRY':
      count('deferred', recipients);
      return;
    case 'FAILED':
      count('failed', recipients);
      return;
    case 'SKIPPED':
      return;
  }
}

/** The MTA's recorded outcomes and deferrals of one attempt, under the provider its MX hosts matched. */
export function countDirectAttempt(
  metrics: MetricsReporter,
  provider: string | null,
  outcomes: readonly MtaOutcome[],
  deferredRecipients: number,
): void {
  const labels = (outcome: DeliveryOutcomeLabel) => [outcome, 'direct', provider ?? 'default'];
  for (const outcome of outcomes) {
    const n = outcome.recipients?.length ?? 1;
    if (outcome.type === 'delivered') metrics.count(METRIC.deliveries, labels('delivered'), n);
    else if (outcome.type === 'bounced') metrics.count(METRIC.deliveries, labels('bounced'), n);
  }
  if (deferredRecipients > 0) metrics.count(METRIC.deliveries, labels('deferred'), deferredRecipients);
}

/**
 * A provider's report applied to `n` recipients (inbound/service.ts): a complaint, or a bounce that
 * came after the message left (final, or soft: tried again by the receiver, a deferral). A delivery
 * report is not counted: the relay's acceptance was.
 */
export function countReportOutcome(
  metrics: Pick<MetricsReporter, 'count'>,
  report: { type: 'delivered' | 'bounced' | 'complained'; bounceType?: 'hard' | 'soft' },
  n: number,
): void {
  if (report.type === 'delivered' || n === 0) return;
  const outcome = report.type === 'complained' ? 'complained' : report.bounceType === 'soft' ? 'deferred' : 'bounced';
  metrics.count(METRIC.deliveries, [outcome, 'report', ''], n);
}

/** A settled webhook delivery, and how long after its event a success came. */
export function countWebhookOutcome(metrics: MetricsReporter, outcome: WebhookOutcome, now = Date.now()): void {
  const label =
    outcome.status === 'succeeded'
      ? 'succeeded'
      : outcome.status === 'pending'
        ? 'retried'
        : outcome.status === 'skipped'
          ? 'skipped'
          : 'failed';
  metrics.count(METRIC.webhookDeliveries, [label]);
  if (outcome.status !== 'succeeded') return;
  // PostgreSQL's text form ("2026-11-28 02:39:06.123456+00"), which Date reads.
  const created = Date.parse(outcome.deliveryCreatedAt);
  if (Number.isFinite(created)) metrics.observe(METRIC.webhookLag, [], Math.max(0, now - created) / 1000);
}
