// The IP pools screen (cli/ui/Pools.tsx) in a test renderer: a tenant's new address on day 1, 10 and
// 30 of the shipped warm-up, beside a warm one. The warm-up values come from daemon/mta/warmup.ts with
// a test clock. `CAPTURE=1` prints the three frames (the capture of the closing note).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import React from 'react';
import { render } from 'ink-testing-library';
import { Pools, PoolView } from '../cli/ui/Pools.tsx';
import {
  ceilingFor,
  defaultWarmupSchedule,
  isWarming,
  NO_STANDING,
  utcDay,
  warmupDay,
  warmupStep,
  type WarmupStanding,
} from '../daemon/mta/warmup.ts';
import type { IpPool } from '../shared/schemas/ip-pools.ts';

const START = new Date('2026-11-01T08:00:00Z');
const DAY_MS = 86_400_000;
const PROVIDERS = ['google', 'yahoo', 'microsoft', 'apple', 'default'];
const tick = (ms = 30) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The pool as GET /platform/ip-pools answers it on day `day`, with `share` of each ceiling sent so far;
 * `google` is the new address's standing with Google before today's sends (held days, refusals).
 */
function poolOnDay(day: number, share: number, google: WarmupStanding = NO_STANDING): IpPool {
  const now = new Date(START.getTime() + (day - 1) * DAY_MS + 15 * 3_600_000);
  const schedule = defaultWarmupSchedule();
  const address = (id: string, ip: string, ehloName: string, startedAt: Date | null, sentWhenWarm: number) => ({
    id,
    ip,
    ehloName,
    weight: 1,
    warmupStartedAt: startedAt?.toISOString() ?? null,
    warmup: {
      state: isWarming(schedule, startedAt, now) ? ('warming' as const) : ('warm' as const),
      day: isWarming(schedule, startedAt, now) ? warmupDay(startedAt, now) : null,
      days: schedule.days,
      providers: PROVIDERS.map((provider) => {
        const known = provider === 'google' && startedAt ? google : NO_STANDING;
        const ceiling = ceilingFor(schedule, provider, startedAt, now, known);
        const sent = known.sent || (ceiling === null ? sentWhenWarm : Math.round(ceiling * share));
        return {
          provider,
          ceiling,
          sent,
          refused: known.refused,
          heldDays: known.heldDays,
          step: warmupStep(schedule, startedAt, now, known),
        };
      }),
    },
    createdAt: START.toISOString(),
  });
  return {
    id: '5b7c3c9e-0000-4000-8000-000000000001',
    name: 'acme-dedicated',
    description: null,
    schedule,
    defaultSchedule: true,
    addresses: [
      address('5b7c3c9e-0000-4000-8000-000000000002', '203.0.113.10', 'mta1.acme.example', START, 0),
      address('5b7c3c9e-0000-4000-8000-000000000003', '203.0.113.11', 'mta2.acme.example', null, 1_234),
    ],
    assignments: [
      {
        id: '5b7c3c9e-0000-4000-8000-000000000004',
        poolId: '5b7c3c9e-0000-4000-8000-000000000001',
        tenantId: '5b7c3c9e-0000-4000-8000-000000000005',
        tenantName: 'Acme',
        projectId: null,
        stream: null,
        createdAt: START.toISOString(),
      },
    ],
    today: utcDay(now),
    createdAt: START.toISOString(),
    updatedAt: START.toISOString(),
  };
}

const frames: string[] = [];

test('day 1: the new address is on day 1/30 with the first ceilings; the warm one has none', () => {
  const { lastFrame, unmount } = render(<PoolView pool={poolOnDay(1, 1)} />);
  const frame = lastFrame()!;
  frames.push(frame);
  unmount();
  assert.match(frame, /acme-dedicated/);
  assert.match(frame, /tenants: Acme/);
  assert.match(frame, /203\.0\.113\.10 mta1\.acme\.example · weight 1 · warm-up day 1\/30/);
  assert.match(frame, /google\s+█+ 50\/50 full: warm addresses take the rest, or it waits/);
  assert.match(frame, /microsoft\s+█+ 30\/30 full/);
  assert.match(frame, /203\.0\.113\.11 mta2\.acme\.example · weight 1 · warm/);
  assert.match(frame, /1234 sent, no ceiling/);
  assert.match(frame, /counts of 2026-11-01 UTC/);
});

test('day 10 and day 30: the ceilings grow with the schedule', () => {
  const day10 = render(<PoolView pool={poolOnDay(10, 0.5)} />);
  const ten = day10.lastFrame()!;
  frames.push(ten);
  day10.unmount();
  assert.match(ten, /warm-up day 10\/30/);
  assert.match(ten, /google\s+█+░+ 2500\/5000/);
  const day30 = render(<PoolView pool={poolOnDay(30, 0.9)} />);
  const thirty = day30.lastFrame()!;
  frames.push(thirty);
  day30.unmount();
  assert.match(thirty, /warm-up day 30\/30/);
  assert.match(thirty, /google\s+█+░* 225000\/250000/);
  const day31 = render(<PoolView pool={poolOnDay(31, 0)} />);
  assert.match(day31.lastFrame()!, /203\.0\.113\.10 mta1\.acme\.example · weight 1 · warm\n/);
  day31.unmount();
});

test('day 10 with two held days and Google refusing 30 of 100 today: step 7, its ceiling, the refusals shown', () => {
  const held = render(<PoolView pool={poolOnDay(10, 0.5, { sent: 100, refused: 30, heldDays: 2 })} />);
  const frame = held.lastFrame()!;
  held.unmount();
  assert.match(frame, /warm-up day 10\/30/);
  // Step 7 of the default curve for Google: 2,000 a day (day 10's is 5,000).
  assert.match(frame, /google\s+[█░]+ 100\/2000 30 refused · step 7 \(2 days held\)/);
  assert.match(frame, /yahoo\s+[█░]+ 1250\/2500\n/, 'other providers keep their step');
});

test('the screen loads, refreshes and leaves on q', async () => {
  let loads = 0;
  let left = false;
  const { lastFrame, stdin, unmount } = render(
    <Pools load={async () => (loads++, [poolOnDay(1 + loads, 0.2)])} refreshMs={40} onExit={() => (left = true)} />,
  );
  await tick(150);
  assert.ok(loads >= 2, `refreshed ${loads} time(s)`);
  assert.match(lastFrame()!, /IP pools and warm-up/);
  assert.match(lastFrame()!, /warm-up day \d+\/30/);
  stdin.write('q');
  await tick();
  assert.ok(left);
  unmount();
  if (process.env.CAPTURE) console.log(frames.map((frame, i) => `--- day ${[1, 10, 30][i]} ---\n${frame}`).join('\n'));
});

test.run();
