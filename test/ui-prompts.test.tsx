// Ink screens added or fixed in the second CLI pass: keystroke bursts in the sign-in form, the masked
// password prompt of `svc register`, dashboard keys that open their screen inside the dashboard, and
// layouts for narrow terminals (60×15, 100 columns).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import React from 'react';
import { render } from 'ink-testing-library';
import { LoginForm } from '../cli/ui/LoginForm.tsx';
import { PasswordPrompt } from '../cli/ui/PasswordPrompt.tsx';
import { Dashboard, type DashboardViews } from '../cli/ui/Dashboard.tsx';
import { LogTail } from '../cli/ui/LogTail.tsx';
import type { DashboardData } from '../cli/services/dashboard.ts';
import type { LogEntry } from '../cli/services/log-feed.ts';

// Generous pauses: Ink renders on a loaded machine too.
const tick = (ms = 30) => new Promise((resolve) => setTimeout(resolve, ms * 3));

test('LoginForm: a burst of Backspaces in one chunk deletes as many characters, none is lost or typed', async () => {
  let submitted: string | null = null;
  const { stdin, lastFrame, unmount } = render(
    <LoginForm
      baseUrl="x"
      submitCredentials={async (email, password) => {
        submitted = `${email} ${password}`;
        return 'signed-in';
      }}
      submitCode={async () => {}}
      onDone={() => {}}
      onCancel={() => {}}
    />,
  );
  stdin.write('ops@x.testXXX');
  await tick();
  stdin.write('\u007f\u007f\u007f');
  await tick();
  assert.match(lastFrame()!, 'ops@x.test');
  assert.not.match(lastFrame()!, 'XXX');
  stdin.write('\r');
  await tick();
  stdin.write('secret-passwordabc\b\b\b\r');
  await tick(60);
  assert.is(submitted, 'ops@x.test secret-password');
  unmount();
});

test('PasswordPrompt: masked, too short refused, asked twice, a mismatch starts over', async () => {
  let done: string | null = null;
  const { stdin, lastFrame, unmount } = render(
    <PasswordPrompt
      title="Choose a password"
      confirm
      minLength={10}
      onDone={(value) => (done = value)}
      onCancel={() => assert.unreachable()}
    />,
  );
  stdin.write('short\r');
  await tick();
  assert.match(lastFrame()!, 'At least 10 characters.');
  stdin.write('\u007f\u007f\u007f\u007f\u007fcorrect-horse\r');
  await tick();
  assert.not.match(lastFrame()!, 'correct-horse');
  assert.match(lastFrame()!, '*************');
  assert.match(lastFrame()!, 'Again');
  stdin.write('correct-hoarse\r');
  await tick();
  assert.match(lastFrame()!, 'The two passwords differ');
  assert.is(done, null);
  stdin.write('correct-horse\r');
  await tick();
  stdin.write('correct-horse\r');
  await tick();
  assert.is(done, 'correct-horse');
  unmount();
});

const data: DashboardData = {
  tenant: {
    value: {
      id: 't',
      name: 'Acme',
      status: 'active',
      plan: 'free',
      monthlyLimit: null,
      sendingPausedAt: null,
      sendingPausedReason: null,
      sendingAtRiskAt: null,
      sendingAtRiskReason: null,
      role: 'owner',
      createdAt: '',
    },
    error: null,
  },
  quota: { value: { used: 12, limit: 100, source: 'logs' }, error: null },
  queues: { value: null, error: 'no access' },
  recent: { value: [], error: null },
  failingWebhooks: { value: [], error: null },
  warnings: { value: [], error: null },
  loadedAt: '',
};

test('Dashboard: k, t and l open their screen inside the dashboard, Esc comes back; the dashboard never exits for them', async () => {
  const asked: string[] = [];
  let used: string | null = null;
  const entry = {
    id: 'e1',
    status: 'SENT',
    to: ['ada@example.com'],
    subject: 'Welcome',
    createdAt: '2026-05-01T09:00:00.000Z',
    updatedAt: '2026-05-01T09:00:01.000Z',
  } as unknown as LogEntry;
  const views: DashboardViews = {
    text: async (action) => {
      asked.push(action);
      return 'ID        NAME\nkey-1     ci';
    },
    logTail: {
      source: async function* () {
        yield entry;
      },
      loadDetail: async () => {
        throw new Error('no');
      },
    },
    tenants: async () => [
      { label: 'Acme', value: 't' },
      { label: 'Beta', value: 'b' },
    ],
    useTenant: async (id) => {
      used = id;
    },
  };
  let left = false;
  const { stdin, lastFrame, unmount } = render(
    <Dashboard
      load={async () => data}
      views={views}
      onAction={() => assert.unreachable('no exit for a key')}
      onExit={() => (left = true)}
      refreshMs={60_000}
    />,
  );
  await tick(60);
  assert.match(lastFrame()!, 'svc dashboard · Acme');
  stdin.write('k');
  await tick(60);
  assert.equal(asked, ['keys:list']);
  assert.match(lastFrame()!, 'svc dashboard › API keys');
  assert.match(lastFrame()!, 'key-1     ci');
  assert.match(lastFrame()!, 'Esc or q: back to the dashboard');
  stdin.write('\u001b');
  await tick(60);
  assert.match(lastFrame()!, 'Quota this month');
  stdin.write('t');
  await tick(60);
  assert.match(lastFrame()!, 'Choose the tenant to act in');
  stdin.write('\u001b[B');
  await tick();
  stdin.write('\r');
  await tick(60);
  assert.is(used, 'b');
  assert.match(lastFrame()!, 'Quota this month');
  stdin.write('l');
  await tick(80);
  assert.match(lastFrame()!, 'ada@example.com');
  // q comes back to the dashboard here, and the key help says so.
  assert.match(lastFrame()!, 'q back');
  assert.not.match(lastFrame()!, 'q quit');
  stdin.write('q');
  await tick(60);
  assert.match(lastFrame()!, 'Quota this month');
  assert.is(left, false);
  stdin.write('q');
  await tick();
  assert.is(left, true);
  unmount();
});

function sends(count: number): LogEntry[] {
  return Array.from(
    { length: count },
    (_, index) =>
      ({
        id: `e${index}`,
        status: index % 2 ? 'DELIVERED' : 'SENT',
        to: [`someone.with.a.long.address.${index}@example-customer-domain.com`],
        subject: `Your order number ${index} has shipped and is on its way to the address you gave us`,
        createdAt: '2026-05-01T09:00:00.000Z',
        updatedAt: '2026-05-01T09:00:01.000Z',
      }) as unknown as LogEntry,
  );
}

for (const [columns, rows] of [
  [60, 15],
  [100, 15],
  [100, 40],
] as const) {
  test(`LogTail at ${columns}×${rows}: header and key help stay, rows are cut to the width, never wrapped`, async () => {
    const { lastFrame, unmount } = render(
      <LogTail
        columns={columns}
        rows={rows - 4}
        source={async function* () {
          for (const entry of sends(40)) yield entry;
        }}
        loadDetail={async () => {
          throw new Error('no');
        }}
        onExit={() => {}}
      />,
    );
    await tick(80);
    const lines = lastFrame()!.split('\n');
    assert.ok(lines.length <= rows, `${lines.length} lines for ${rows} rows`);
    assert.match(lines[0], 'Email log');
    assert.match(lines[lines.length - 1], 'q quit');
    for (const line of lines) assert.ok(line.length <= columns, `${line.length} > ${columns}: ${line}`);
    assert.match(lastFrame()!, 'e39'.replace('e39', 'someone.with'));
    unmount();
  });

  test(`Dashboard at ${columns}×${rows}: title and key help stay on screen, lines cut to the width`, async () => {
    const many = { ...data, recent: { value: sends(20) as never, error: null } };
    const { lastFrame, unmount } = render(
      <Dashboard
        columns={columns}
        rows={rows}
        load={async () => many}
        onAction={() => {}}
        onExit={() => {}}
        refreshMs={60_000}
      />,
    );
    await tick(60);
    const lines = lastFrame()!.split('\n');
    assert.ok(lines.length <= rows, `${lines.length} lines for ${rows} rows:\n${lastFrame()}`);
    assert.match(lines[0], 'svc dashboard');
    assert.match(lines[lines.length - 1], 'q quit');
    for (const line of lines) assert.ok(line.length <= columns, `${line.length} > ${columns}: ${line}`);
    unmount();
  });
}

test.run();
