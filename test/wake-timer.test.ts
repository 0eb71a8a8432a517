// WakeTimer (jobs/wake.ts): a loop is woken when the earliest time it was given comes — a deferred
// message's retry is claimed when due, not at the next poll — and only then: a later time does not
// replace an earlier one, an earlier one does, and close() cancels what is armed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WakeTimer, type Waker } from '../daemon/jobs/wake.ts';

function countingWaker(): Waker & { wakes: number[] } {
  const wakes: number[] = [];
  return { wakes, wake: () => void wakes.push(Date.now()), wait: () => Promise.resolve() };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('wakes once, at the earliest time given; a later time changes nothing', async () => {
  const waker = countingWaker();
  const timer = new WakeTimer(waker, 0);
  const start = Date.now();
  timer.at(new Date(start + 400));
  timer.at(new Date(start + 60));
  timer.at(new Date(start + 900));
  await sleep(30);
  assert.is(waker.wakes.length, 0, 'not before the earliest time');
  await sleep(300);
  assert.is(waker.wakes.length, 1, 'woken by the earliest time, before the one armed first');
  assert.ok(waker.wakes[0] - start >= 59, `woke after ${waker.wakes[0] - start} ms`);
  await sleep(700);
  assert.is(waker.wakes.length, 1, 'the times replaced by an earlier one do not wake again');
  timer.close();
});

test('after it fired, a new time arms it again; a time already past wakes at once', async () => {
  const waker = countingWaker();
  const timer = new WakeTimer(waker, 0);
  timer.at(new Date(Date.now() + 20));
  await sleep(80);
  assert.is(waker.wakes.length, 1);
  timer.at(new Date(Date.now() - 1_000));
  await sleep(20);
  assert.is(waker.wakes.length, 2);
  timer.close();
});

test('the slack is added to each time; close() cancels what is armed', async () => {
  const waker = countingWaker();
  const timer = new WakeTimer(waker, 150);
  const start = Date.now();
  timer.at(new Date(start));
  await sleep(60);
  assert.is(waker.wakes.length, 0, 'not before time + slack');
  await sleep(200);
  assert.is(waker.wakes.length, 1);
  assert.ok(waker.wakes[0] - start >= 149);
  timer.at(new Date(Date.now() + 50));
  timer.close();
  await sleep(150);
  assert.is(waker.wakes.length, 1, 'closed: no wake');
});

test.run();
