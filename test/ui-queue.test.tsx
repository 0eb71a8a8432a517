// The outbound queue screen (cli/ui/Queue.tsx) in a test renderer: a line per destination with its
// counts, age, next try, held or stuck and last response; the keys that retry, hold and release the
// selected domain; the DELIVERY=relay warning; and `o` in the dashboard opening it (Esc comes back).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import React from 'react';
import { render } from 'ink-testing-library';
import { QueueScreen } from '../cli/ui/Queue.tsx';
import { Dashboard, type DashboardViews } from '../cli/ui/Dashboard.tsx';
import type { DashboardData } from '../cli/services/dashboard.ts';
import type { OutboundDestination, OutboundQueuePage } from '../shared/schemas/outbound-queue.ts';
import { waitFor } from './helpers/wait.ts';

/** Waits until the screen shows `text` (the renderer commits on its own schedule; a loaded machine is slow). */
async function shows(lastFrame: () => string | undefined, text: string | RegExp): Promise<string> {
  const found = () => {
    const frame = lastFrame() ?? '';
    return typeof text === 'string' ? frame.includes(text) : text.test(frame);
  };
  await waitFor(`the screen to show ${String(text)}`, found, { timeoutMs: 5_000, details: () => lastFrame() ?? '' });
  return lastFrame()!;
}
const NOW = Date.parse('2026-11-25T12:00:00.000Z');
const DOWN = '\u001b[B';
const ESC = '\u001b';

function destination(domain: string, fields: Partial<OutboundDestination> = {}): OutboundDestination {
  return {
    domain,
    queued: 0,
    deferred: 0,
    inFlight: 0,
    oldestAt: null,
    nextTryAt: null,
    lastAttemptAt: null,
    lastResponse: null,
    oldestWaitingAgeMs: 0,
    stuck: false,
    held: false,
    heldAt: null,
    heldBy: null,
    holdReason: null,
    ...fields,
  };
}

function pageOf(data: OutboundDestination[], delivery: 'direct' | 'relay' = 'direct'): OutboundQueuePage {
  return {
    data,
    meta: { page: 1, limit: 100, total: data.length, totalPages: 1 },
    delivery,
    resolver: [],
    reactions: [],
    sourceFaults: [],
  };
}

const QUEUE = pageOf([
  destination('gmail.test', {
    queued: 3,
    deferred: 12,
    inFlight: 2,
    oldestAt: new Date(NOW - 2 * 3600_000 - 5 * 60_000).toISOString(),
    nextTryAt: new Date(NOW + 90_000).toISOString(),
    lastResponse: '451 4.7.1 greylisted, try later',
  }),
  destination('blocked.test', {
    deferred: 4,
    held: true,
    heldAt: new Date(NOW).toISOString(),
    heldBy: { id: '00000000-0000-4000-8000-000000000001', email: 'ops@acme.test' },
    holdReason: 'they blocklisted us',
  }),
  destination('slow.test', { queued: 7, oldestAt: new Date(NOW - 45_000).toISOString(), stuck: true }),
]);

test('QueueScreen: a line per destination with counts, oldest, next try, state and the last response', async () => {
  const { lastFrame, unmount } = render(
    <QueueScreen load={async () => QUEUE} onExit={() => {}} refreshMs={60_000} columns={140} now={() => NOW} />,
  );
  const frame = await shows(lastFrame, 'slow.test');
  assert.match(frame, 'svc queue · outbound (3 destinations, DELIVERY=direct)');
  assert.match(frame, /DOMAIN\s+QUEUED\s+DEFERRED\s+IN FLIGHT\s+OLDEST\s+NEXT TRY\s+STATE\s+LAST RESPONSE/);
  assert.match(frame, /› gmail\.test\s+3\s+12\s+2\s+2h 5m\s+in 1m 30s\s+451 4\.7\.1 greylisted, try later/);
  assert.match(frame, /blocked\.test\s+0\s+4\s+0\s+—\s+—\s+held/);
  assert.match(frame, /slow\.test\s+7\s+0\s+0\s+45s\s+—\s+stuck/);
  // Alone (`svc queue`) q ends the command: the key help says quit.
  assert.match(frame, 'r refresh · q quit');
  assert.not.match(frame, 't retry now', 'no action keys without actions');
  unmount();
});

test('QueueScreen: ↓ selects, t retries, h holds, u releases the selected domain; a refusal is shown; q leaves', async () => {
  const calls: string[] = [];
  let loads = 0;
  let left = false;
  const actions = {
    retry: async (domain: string) => void calls.push(`retry ${domain}`),
    hold: async (domain: string) => void calls.push(`hold ${domain}`),
    release: async (domain: string) => {
      calls.push(`release ${domain}`);
      throw new Error('blocked.test is not held: there is nothing to release.');
    },
  };
  const { stdin, lastFrame, unmount } = render(
    <QueueScreen
      load={async () => (loads++, QUEUE)}
      actions={actions}
      onExit={() => (left = true)}
      refreshMs={60_000}
      columns={140}
      now={() => NOW}
    />,
  );
  await shows(lastFrame, '› gmail.test');
  assert.match(lastFrame()!, '↑/↓ select · t retry now · h hold · u release');
  stdin.write('t');
  await shows(lastFrame, 'gmail.test made due now.');
  await waitFor('an action to reload the list', () => loads >= 2);
  stdin.write(DOWN);
  await shows(lastFrame, '› blocked.test');
  assert.match(lastFrame()!, 'blocked.test held by ops@acme.test: they blocklisted us');
  stdin.write('h');
  await shows(lastFrame, 'blocked.test held.');
  stdin.write('u');
  await shows(lastFrame, 'release blocked.test: blocked.test is not held');
  assert.equal(calls, ['retry gmail.test', 'hold blocked.test', 'release blocked.test']);
  stdin.write('q');
  await waitFor('q to leave the screen', () => left);
  unmount();
});

test('QueueScreen: empty, a load failure, and the warning of a daemon that does not deliver the spool', async () => {
  let fail = true;
  const { stdin, lastFrame, unmount } = render(
    <QueueScreen
      load={async () => {
        if (fail) throw new Error('Only platform admins may do this.');
        return pageOf([], 'relay');
      }}
      onExit={() => {}}
      refreshMs={60_000}
      columns={140}
    />,
  );
  await shows(lastFrame, 'Only platform admins may do this.');
  fail = false;
  stdin.write('r');
  await shows(lastFrame, 'DELIVERY=relay: the spool is delivered only by a node started with DELIVERY=direct');
  assert.match(lastFrame()!, 'The outbound queue is empty');
  unmount();
});

const DASHBOARD: DashboardData = {
  tenant: { value: null, error: 'no tenant' },
  quota: { value: { used: 1, limit: 100, source: 'logs' }, error: null },
  queues: {
    value: {
      ok: true,
      stuckAfterMs: 60_000,
      queues: {},
      outbound: {
        delivery: 'direct',
        queued: 3,
        deferred: 16,
        inFlight: 2,
        heldDestinations: 1,
        oldestWaitingAgeMs: 0,
        stuck: false,
      },
    },
    error: null,
  },
  recent: { value: [], error: null },
  failingWebhooks: { value: [], error: null },
  warnings: { value: [], error: null },
  loadedAt: '',
};

test('Dashboard: the outbound line in the queues panel; o opens the queue screen, Esc comes back', async () => {
  const views: DashboardViews = {
    text: async () => '',
    logTail: {
      source: async function* () {},
      loadDetail: async () => {
        throw new Error('no');
      },
    },
    tenants: async () => [],
    useTenant: async () => {},
    queue: { load: async () => QUEUE, refreshMs: 60_000, columns: 140, now: () => NOW },
  };
  const { stdin, lastFrame, unmount } = render(
    <Dashboard
      load={async () => DASHBOARD}
      views={views}
      onAction={() => assert.unreachable('no exit for a key')}
      onExit={() => assert.unreachable('not left')}
      refreshMs={60_000}
      columns={140}
      rows={40}
    />,
  );
  await shows(lastFrame, /outbound\s+queued\s+3 deferred 16 in flight 2 1 held/);
  assert.match(lastFrame()!, 'o outbound queue');
  stdin.write('o');
  await shows(lastFrame, 'svc queue · outbound (3 destinations');
  await shows(lastFrame, 'gmail.test');
  // Inside the dashboard q comes back to it: the key help says back, not quit.
  assert.match(lastFrame()!, 'r refresh · q back');
  stdin.write(ESC);
  await shows(lastFrame, 'Quota this month');
  unmount();
});

test.run();
