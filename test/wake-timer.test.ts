// WakeTimer (queue/wake.ts): a loop is woken when each time it was given comes — a deferred message's
// retry, a row shaping gave back — so the row is claimed when due, not at the next poll. Times that fall
// in one slot share a wake; a later time is not dropped because an earlier one is armed; close()
// cancels what is armed.
import { mock } from 'node:test';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WakeTimer, type Waker } from '../daemon/queue/wake.ts';

function countingWaker(): Waker & { wakes: number[] } {
  const wakes: number[] = [];
  return { wakes, wake: () => void wakes.push(Date.now()), wait: () => Promise.resolve() };
}

// Node's mock clock (setTimeout and Date, which WakeTimer reads): each test moves time on instead of
// sleeping through it, so the times asserted are exact and a loaded machine cannot make them late.
test.before.each(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 }));
test.after.each(() => mock.timers.reset());
const advance = (ms: number) => mock.timers.tick(ms);

test('each time wakes the loop once it has come, the earliest first; a later one is not dropped', () => {
  const waker = countingWaker();
  const timer = new WakeTimer(waker, 10, 0);
  const start = Date.now();
  timer.at(new Date(start + 400));
  timer.at(start + 60);
  assert.is(timer.armed, 2);
  advance(30);
  assert.is(waker.wakes.length, 0, 'not before the earliest time');
  advance(150);
  assert.is(waker.wakes.length, 1, 'woken by the earliest time');
  assert.ok(waker.wakes[0] - start >= 59, `woke after ${waker.wakes[0] - start} ms`);
  advance(400);
  assert.is(waker.wakes.length, 2, 'and again by the later one');
  assert.ok(waker.wakes[1] - start >= 399, `second wake after ${waker.wakes[1] - start} ms`);
  assert.is(timer.armed, 0);
  timer.close();
});

test('times in one slot share a timer; a time already past wakes at once', () => {
  const waker = countingWaker();
  const timer = new WakeTimer(waker, 1_000, 0);
  const slotStart = Math.ceil(Date.now() / 1_000) * 1_000 + 1_000;
  // Three rows due within the same second of the clock: one timer, one wake.
  for (const offset of [1, 400, 999]) timer.at(slotStart + offset, slotStart + 1_950);
  assert.is(timer.armed, 1);
  advance(20);
  assert.is(waker.wakes.length, 1, 'the slot had passed by the clock given: woken at once');
  timer.at(Date.now() - 5_000);
  advance(20);
  assert.is(waker.wakes.length, 2);
  timer.close();
});

test('the slack is added to each slot; close() cancels what is armed', () => {
  const waker = countingWaker();
  const timer = new WakeTimer(waker, 1, 150);
  const start = Date.now();
  timer.at(start);
  advance(60);
  assert.is(waker.wakes.length, 0, 'not before time + slack');
  advance(200);
  assert.is(waker.wakes.length, 1);
  assert.ok(waker.wakes[0] - start >= 149);
  timer.at(Date.now() + 50);
  timer.at(Date.now() + 80);
  timer.close();
  assert.is(timer.armed, 0);
  advance(300);
  assert.is(waker.wakes.length, 1, 'closed: no wake');
});

test.run();
