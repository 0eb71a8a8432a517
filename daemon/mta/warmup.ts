// Warm-up of a new source address (issue 29, docs/mta.md "IP pools and warm-up"): on day N of its
// warm-up an address may send at most ceilings[provider][N-1] messages to a provider per UTC day;
// after the schedule's last day it is warm (no ceiling). Days are UTC calendar days, so the counts
// (table ip_warmup_counts) reset at 00:00 UTC. A day on which the provider deferred or bounced too
// many of the address's recipients (WARMUP_HOLD) does not advance the ramp: the next day repeats its
// step, and the warm-up lasts a day longer; while today is such a day the address is back one step.
// Pure: every function takes `now`, so a test clock drives day 1, 10 and 30 without waiting.
import { DEFAULT_PROVIDER_KEY } from './providers.ts';
import type { WarmupSchedule } from '../../shared/schemas/ip-pools.ts';

const DAY_MS = 86_400_000;

/**
 * The shipped 30-day curve: 50 → 100 → 500 … → 250,000 a day, the shape mailbox providers and ESPs
 * publish (double early, then grow by a few tens of percent a day). Providers that throttle new IPs
 * harder start lower; admins edit the schedule per pool.
 */
const BASE_CURVE = [
  50, 100, 500, 750, 1_000, 1_500, 2_000, 3_000, 4_000, 5_000, 7_500, 10_000, 12_500, 15_000, 20_000, 25_000, 30_000,
  35_000, 40_000, 50_000, 60_000, 70_000, 80_000, 90_000, 100_000, 125_000, 150_000, 175_000, 200_000, 250_000,
];
const PROVIDER_SHARE: Record<string, number> = {
  google: 1,
  yahoo: 0.5,
  microsoft: 0.5,
  apple: 0.4,
  [DEFAULT_PROVIDER_KEY]: 1,
};

export function defaultWarmupSchedule(): WarmupSchedule {
  const providers: Record<string, number[]> = {};
  for (const [provider, share] of Object.entries(PROVIDER_SHARE))
    providers[provider] = BASE_CURVE.map((ceiling) => Math.max(20, Math.round((ceiling * share) / 10) * 10));
  return { days: BASE_CURVE.length, providers };
}

/** 'YYYY-MM-DD' of `now` in UTC: the key of the day's counts. */
export function utcDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** 00:00 UTC of the day after `now`: when today's counts stop counting. */
export function nextUtcDay(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
}

/**
 * When a day holds the ramp: at least `rate` of at least `minimum` recipients that reached the provider's
 * MX hosts were deferred or bounced. Mailbox providers answer a new address's volume with 421/451
 * deferrals first ("unusual rate", "try again later"); sending the next day's larger step into them
 * is how a warm-up goes wrong. `minimum` keeps a handful of recipients from deciding a day.
 */
export const WARMUP_HOLD = { rate: 0.1, minimum: 20 } as const;

/** An address's standing with one provider: today's recipients and refusals, and its held days before today. */
export interface WarmupStanding {
  sent: number;
  refused: number;
  heldDays: number;
}

export const NO_STANDING: WarmupStanding = { sent: 0, refused: 0, heldDays: 0 };

/** Whether a day's counts hold the ramp (WARMUP_HOLD). */
export function holdsRamp(counts: Pick<WarmupStanding, 'sent' | 'refused'>): boolean {
  return counts.sent >= WARMUP_HOLD.minimum && counts.refused >= counts.sent * WARMUP_HOLD.rate;
}

/** Day of the warm-up on `now` (1 on the day it started); null for an address that never warms up. */
export function warmupDay(startedAt: Date | null, now: Date): number | null {
  if (!startedAt) return null;
  const days = Math.floor(
    (Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) -
      Date.UTC(startedAt.getUTCFullYear(), startedAt.getUTCMonth(), startedAt.getUTCDate())) /
      DAY_MS,
  );
  return Math.max(1, days + 1);
}

/**
 * The schedule's step an address is on with a provider today: its day less the days that held the ramp,
 * one step back while today holds it (never below 1); null once past the last step (warm: a bad day after
 * the warm-up is shaping's business, not the warm-up's) or for an address that never warms up.
 */
export function warmupStep(
  schedule: WarmupSchedule,
  startedAt: Date | null,
  now: Date,
  standing: WarmupStanding = NO_STANDING,
): number | null {
  const day = warmupDay(startedAt, now);
  if (day === null) return null;
  const step = day - standing.heldDays;
  if (step > schedule.days) return null;
  return Math.max(1, step - (holdsRamp(standing) ? 1 : 0));
}

/** Whether the address has a ceiling with some provider on `now`: started, and not past the schedule's last step. */
export function isWarming(
  schedule: WarmupSchedule,
  startedAt: Date | null,
  now: Date,
  standings: WarmupStanding[] = [],
): boolean {
  return [NO_STANDING, ...standings].some((standing) => warmupStep(schedule, startedAt, now, standing) !== null);
}

/** Today's ceiling for `provider`, or null when the address is warm with it. */
export function ceilingFor(
  schedule: WarmupSchedule,
  provider: string,
  startedAt: Date | null,
  now: Date,
  standing: WarmupStanding = NO_STANDING,
): number | null {
  const step = warmupStep(schedule, startedAt, now, standing);
  if (step === null) return null;
  const ceilings = schedule.providers[provider] ?? schedule.providers[DEFAULT_PROVIDER_KEY];
  // A list shorter than the schedule keeps its last value.
  return ceilings[Math.min(step, ceilings.length) - 1];
}

/** What is wrong with a schedule an admin sent, or null (the TypeBox schema checked the shapes). */
export function scheduleProblem(schedule: WarmupSchedule): { field: string; message: string } | null {
  if (!schedule.providers[DEFAULT_PROVIDER_KEY])
    return { field: 'providers.default', message: "a 'default' ceiling list is required" };
  for (const [provider, ceilings] of Object.entries(schedule.providers))
    if (ceilings.length !== schedule.days)
      return {
        field: `providers.${provider}`,
        message: `has ${ceilings.length} day(s); the schedule has ${schedule.days}`,
      };
  return null;
}
