// What `svc stats deliverability` shows, as plain data the text output and the Ink screen
// (ui/Deliverability.tsx) both draw: per provider, one column per day of the period, with the day's
// delivered volume as a sparkline and the problems (deferred, bounced, complained) beside it.
import type { DeliverabilityBody, DeliverabilityDay } from '../../shared/schemas/deliverability.ts';

const SPARKS = '▁▂▃▄▅▆▇█';

/** Every UTC day from `from` to `to`, included. */
export function daysOf(from: string, to: string): string[] {
  const days: string[] = [];
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += 86_400_000)
    days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

/**
 * One character per value, scaled to `max` (default: the largest value); a blank for zero so quiet days
 * read as gaps. Problems are drawn on the delivered scale, so a few bounces do not look like many.
 */
export function sparkline(values: readonly number[], max = Math.max(0, ...values)): string {
  return values
    .map((value) =>
      value <= 0 || max === 0 ? ' ' : SPARKS[Math.min(SPARKS.length - 1, Math.ceil((value / max) * SPARKS.length) - 1)],
    )
    .join('');
}

export interface ProviderSeries {
  provider: string;
  /** Per day of the period, in order. */
  delivered: number[];
  problems: number[];
  totals: { delivered: number; deferred: number; bounced: number; complained: number };
  complaintRate: number | null;
  bounceRate: number | null;
}

export function providerSeries(body: DeliverabilityBody): ProviderSeries[] {
  const days = daysOf(body.from, body.to);
  const index = new Map(days.map((day, i) => [day, i]));
  const byProvider = new Map<string, DeliverabilityDay[]>();
  for (const row of body.days) byProvider.set(row.provider, [...(byProvider.get(row.provider) ?? []), row]);
  return body.totals.map((total) => {
    const delivered = days.map(() => 0);
    const problems = days.map(() => 0);
    for (const row of byProvider.get(total.provider) ?? []) {
      const i = index.get(row.day);
      if (i === undefined) continue;
      delivered[i] = row.delivered;
      problems[i] = row.deferred + row.bounced + row.complained;
    }
    return {
      provider: total.provider,
      delivered,
      problems,
      totals: {
        delivered: total.delivered,
        deferred: total.deferred,
        bounced: total.bounced,
        complained: total.complained,
      },
      complaintRate: total.complaintRate,
      bounceRate: total.bounceRate,
    };
  });
}

/** The common scale of a provider's two lines. */
export function scaleOf(series: Pick<ProviderSeries, 'delivered' | 'problems'>): number {
  return Math.max(0, ...series.delivered, ...series.problems);
}

/** `0.12 %`, or `—` when there is nothing to divide by. */
export function percent(rate: number | null): string {
  return rate === null ? '—' : `${(rate * 100).toFixed(2)} %`;
}

/** Gmail and Yahoo ask for a complaint rate under 0.1 % and never 0.3 %. */
export function complaintLevel(rate: number | null): 'ok' | 'warn' | 'bad' {
  if (rate === null || rate < 0.001) return 'ok';
  return rate < 0.003 ? 'warn' : 'bad';
}

/** The text report: a line per provider with the totals, and the sparklines of the period. */
export function renderDeliverabilityText(body: DeliverabilityBody): string {
  const series = providerSeries(body);
  const lines = [`Deliverability ${body.from} → ${body.to} (UTC days)${body.provider ? `, ${body.provider}` : ''}`];
  if (series.length === 0) {
    lines.push('No delivery outcomes in this period.');
    return lines.join('\n');
  }
  const width = Math.max(9, ...series.map((s) => s.provider.length));
  for (const s of series) {
    lines.push(
      '',
      `${s.provider.padEnd(width)}  delivered ${s.totals.delivered}  deferred ${s.totals.deferred}  bounced ${s.totals.bounced}  complained ${s.totals.complained}  complaint rate ${percent(s.complaintRate)}  bounce rate ${percent(s.bounceRate)}`,
      `${'delivered'.padStart(width)}  |${sparkline(s.delivered, scaleOf(s))}|`,
      `${'problems'.padStart(width)}  |${sparkline(s.problems, scaleOf(s))}|`,
    );
  }
  return lines.join('\n');
}
