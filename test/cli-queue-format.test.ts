// `svc queue`'s durations: the largest unit and the one after it, never a gap between them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { durationText, nextTryText } from '../cli/services/outbound-queue.ts';

test('the two largest consecutive units', () => {
  const cases: [number, string][] = [
    [0, '0s'],
    [5, '5s'],
    [95, '1m 35s'],
    [3_600, '1h 0m'],
    [3_630, '1h 0m'],
    [7_500, '2h 5m'],
    [90_000, '1d 1h'],
  ];
  for (const [seconds, text] of cases) assert.is(durationText(seconds * 1000), text, `${seconds} s`);
});

test('next try: "in …", "now" when due, "—" when nothing waits', () => {
  const now = Date.parse('2026-11-25T12:00:00Z');
  assert.is(nextTryText('2026-11-25T13:00:20Z', now), 'in 1h 0m');
  assert.is(nextTryText('2026-11-25T11:59:00Z', now), 'now');
  assert.is(nextTryText(null, now), '—');
});

test.run();
