// Ink screens in a test renderer: the sign-in form with 2FA, the picker, the live log, the dashboard.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import React from 'react';
import { render } from 'ink-testing-library';
import { LoginForm } from '../cli/ui/LoginForm.tsx';
import { Picker } from '../cli/ui/Picker.tsx';
import { LogTail } from '../cli/ui/LogTail.tsx';
import { Dashboard, QuotaBar } from '../cli/ui/Dashboard.tsx';
import type { LogEntry } from '../cli/services/log-feed.ts';
import type { DashboardData } from '../cli/services/dashboard.ts';
import type { EmailLogDetail } from '../cli/api-types.ts';

const tick = (ms = 30) => new Promise((resolve) => setTimeout(resolve, ms));
const ENTER = '\r';
const DOWN = '\u001b[B';
const UP = '\u001b[A';
const ESC = '\u001b';

async function type(stdin: { write: (data: string) => void }, text: string) {
  for (const character of text) {
    stdin.write(character);
    await tick(5);
  }
  await tick();
}

function entry(id: string, status: LogEntry['status'], to: string, subject = `subject ${id}`): LogEntry {
  return {
    id,
    status,
    to: [to],
    subject,
    messageId: `<${id}@x>`,
    from: 'f@x.test',
    cc: [],
    tags: [],
    projectId: null,
    templateVersionId: null,
    captured: true,
    testMode: false,
    attempts: 0,
    error: null,
    sentAt: null,
    createdAt: '2026-05-01T09:00:00.000Z',
    updatedAt: '2026-05-01T09:00:01.000Z',
  };
}

test('LoginForm: e-mail, masked password, then the authenticator code when the daemon asks for it', async () => {
  const calls: string[] = [];
  let done: string | null = null;
  const { stdin, lastFrame, unmount } = render(
    <LoginForm
      baseUrl="http://127.0.0.1:3000"
      submitCredentials={async (email, password) => {
        calls.push(`credentials ${email} ${password}`);
        return 'needs-code';
      }}
      submitCode={async (code) => {
        calls.push(`code ${code}`);
      }}
      onDone={(email) => (done = email)}
      onCancel={() => assert.unreachable('not cancelled')}
    />,
  );
  assert.match(lastFrame()!, 'Sign in to http://127.0.0.1:3000');
  await type(stdin, 'ops@x.test');
  stdin.write(ENTER);
  await tick();
  await type(stdin, 'hunter2-secret');
  assert.match(lastFrame()!, '**************');
  assert.not.match(lastFrame()!, 'hunter2');
  stdin.write(ENTER);
  await tick(60);
  assert.equal(calls, ['credentials ops@x.test hunter2-secret']);
  assert.match(lastFrame()!, 'Code');
  await type(stdin, '12');
  stdin.write(ENTER);
  await tick();
  assert.match(lastFrame()!, '6 digits');
  await type(stdin, '3456');
  stdin.write(ENTER);
  await tick(60);
  assert.equal(calls.at(-1), 'code 123456');
  assert.is(done, 'ops@x.test');
  unmount();
});

test('LoginForm: a refused password shows the API sentence and lets the person retry', async () => {
  let attempts = 0;
  let done: string | null = null;
  const { stdin, lastFrame, unmount } = render(
    <LoginForm
      baseUrl="http://x"
      initialEmail="ops@x.test"
      submitCredentials={async () => {
        attempts += 1;
        if (attempts === 1) throw new Error('The e-mail or password is wrong.');
        return 'signed-in';
      }}
      submitCode={async () => assert.unreachable('no 2FA')}
      onDone={(email) => (done = email)}
      onCancel={() => {}}
    />,
  );
  await type(stdin, 'bad');
  stdin.write(ENTER);
  await tick(60);
  assert.match(lastFrame()!, 'The e-mail or password is wrong.');
  assert.not.match(lastFrame()!, '***', 'the password field was cleared');
  await type(stdin, 'good-password');
  stdin.write(ENTER);
  await tick(60);
  assert.is(done, 'ops@x.test');
  unmount();
});

test('TextInput: keys that arrive in one chunk, Enter included, are all kept', async () => {
  let submitted: string | null = null;
  const { stdin, unmount } = render(
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
  stdin.write('fast@x.test\r');
  await tick();
  stdin.write('pasted-password\r');
  await tick(60);
  assert.is(submitted, 'fast@x.test pasted-password');
  unmount();
});

test('Picker: arrows move, typing filters, Enter picks, Escape cancels', async () => {
  const items = [
    { label: 'Acme', value: 'a', hint: 'owner' },
    { label: 'Beta', value: 'b', hint: 'viewer' },
    { label: 'Gamma', value: 'g' },
  ];
  let picked: string | null = null;
  const first = render(
    <Picker
      title="Choose the tenant"
      items={items}
      initialValue="a"
      onPick={(value) => (picked = value)}
      onCancel={() => {}}
    />,
  );
  assert.match(first.lastFrame()!, '❯ Acme owner');
  first.stdin.write(DOWN);
  await tick();
  assert.match(first.lastFrame()!, '❯ Beta');
  first.stdin.write(ENTER);
  await tick();
  assert.is(picked, 'b');
  first.unmount();

  const second = render(<Picker title="t" items={items} onPick={(value) => (picked = value)} onCancel={() => {}} />);
  await type(second.stdin, 'gam');
  assert.not.match(second.lastFrame()!, 'Acme');
  second.stdin.write(ENTER);
  await tick();
  assert.is(picked, 'g');
  second.unmount();

  let cancelled = false;
  const third = render(<Picker title="t" items={items} onPick={() => {}} onCancel={() => (cancelled = true)} />);
  third.stdin.write(ESC);
  await tick(100);
  assert.ok(cancelled);
  third.unmount();
});

test('LogTail: live entries with status, status filter, pause, detail view, quit', async () => {
  const queue: LogEntry[] = [];
  let wake: (() => void) | null = null;
  const push = (value: LogEntry) => {
    queue.push(value);
    wake?.();
  };
  async function* source(signal: AbortSignal, onMode: (mode: 'stream' | 'poll') => void) {
    onMode('stream');
    while (!signal.aborted) {
      while (queue.length) yield queue.shift()!;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  }
  const details: string[] = [];
  let exited = false;
  const { stdin, lastFrame, unmount } = render(
    <LogTail
      source={source}
      loadDetail={async (id) => {
        details.push(id);
        return {
          ...entry(id, 'FAILED', 'grace@example.com', 'Invoice'),
          error: 'mailbox full',
          bcc: [],
          replyTo: [],
          bodyHtml: null,
          bodyText: 'Hello Grace',
          headers: {},
          metadata: {},
          attachments: [],
          trackOpens: false,
          trackClicks: false,
          smtpResponse: '552 mailbox full',
          resentFrom: null,
          bodiesRemovedAt: null,
          events: [{ type: 'email.failed', data: {}, createdAt: '2026-05-01T09:00:02.000Z' }],
          replies: [],
          raw: null,
        } as EmailLogDetail;
      }}
      onExit={() => (exited = true)}
    />,
  );
  push(entry('1', 'QUEUED', 'ada@example.com', 'Welcome'));
  push(entry('2', 'FAILED', 'grace@example.com', 'Invoice'));
  await tick(60);
  let frame = lastFrame()!;
  assert.match(frame, '● live');
  assert.match(frame, 'QUEUED');
  assert.match(frame, 'ada@example.com');
  assert.match(frame, 'FAILED');

  stdin.write('s');
  await tick();
  frame = lastFrame()!;
  assert.match(frame, 'status: QUEUED');
  assert.not.match(frame, 'grace@example.com');
  stdin.write('c');
  await tick();

  stdin.write('p');
  await tick();
  push(entry('3', 'SENT', 'linus@example.com'));
  await tick(60);
  frame = lastFrame()!;
  assert.match(frame, 'paused (1 new)');
  assert.not.match(frame, 'linus@example.com', 'a paused view does not move');
  stdin.write('p');
  await tick();
  assert.match(lastFrame()!, 'linus@example.com');

  push(entry('1', 'DELIVERED', 'ada@example.com', 'Welcome'));
  await tick(60);
  frame = lastFrame()!;
  assert.match(frame, 'DELIVERED');
  assert.not.match(frame, 'QUEUED', 'an entry is updated in place, not repeated');

  stdin.write('/');
  await tick();
  await type(stdin, 'grace');
  stdin.write(ENTER);
  await tick();
  assert.not.match(lastFrame()!, 'linus@example.com');
  stdin.write(UP);
  await tick();
  stdin.write(ENTER);
  await tick(60);
  assert.equal(details, ['2']);
  frame = lastFrame()!;
  assert.match(frame, 'mailbox full');
  assert.match(frame, '552 mailbox full');
  assert.match(frame, 'email.failed');
  stdin.write(ESC);
  await tick(100);
  assert.not.match(lastFrame()!, '552 mailbox full');
  stdin.write('q');
  await tick();
  assert.ok(exited);
  unmount();
});

test('QuotaBar and Dashboard: panels, failures per panel, keys jump to screens', async () => {
  const bar = render(<QuotaBar used={85} limit={100} width={10} />);
  assert.match(bar.lastFrame()!, '█████████░ 85 / 100 (85 %)');
  bar.unmount();

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
    queues: { value: null, error: 'The API key lacks access.' },
    recent: { value: [entry('1', 'SENT', 'ada@example.com', 'Welcome')], error: null },
    failingWebhooks: {
      value: [
        {
          id: 'w',
          url: 'https://hooks.acme.test/x',
          events: [],
          enabled: true,
          disabledReason: null,
          consecutiveFailures: 3,
          createdAt: '',
          updatedAt: '',
        },
      ],
      error: null,
    },
    warnings: {
      value: [
        {
          code: 'SYSTEM_SENDER_NOT_ROUTABLE',
          message: 'System mail comes from svc <no-reply@localhost>.',
          fix: 'Set defaultFromAddress.',
        },
      ],
      error: null,
    },
    loadedAt: '',
  };
  const actions: string[] = [];
  let exited = false;
  const { stdin, lastFrame, unmount } = render(
    <Dashboard
      load={async () => data}
      onAction={(action) => actions.push(action)}
      onExit={() => (exited = true)}
      refreshMs={60_000}
      rows={40}
    />,
  );
  await tick(60);
  const frame = lastFrame()!;
  assert.match(frame, 'svc dashboard · Acme');
  assert.match(frame, '12 / 100 (12 %)');
  assert.match(frame, 'The API key lacks access.');
  assert.match(frame, 'ada@example.com');
  assert.match(frame, '3 failures https://hooks.acme.test/x');
  assert.match(frame, '! System mail comes from svc <no-reply@localhost>.');
  assert.match(frame, 'Fix: Set defaultFromAddress.');
  stdin.write('l');
  stdin.write('k');
  await tick();
  assert.equal(actions, ['logs:tail', 'keys:list']);
  stdin.write('q');
  await tick();
  assert.ok(exited);
  unmount();
});

test('Dashboard in a 60×15 terminal: the idle queues fold into one line, the title and the key help stay on screen', async () => {
  const idle = { depth: 0, oldestWaitingAgeMs: 0, running: 0, scheduled: 0, failed: 0, stuck: false };
  const queues = {
    send: { ...idle, depth: 7, running: 2 },
    scheduled: idle,
    webhook: idle,
    maintenance: idle,
    system: idle,
    campaign: idle,
  };
  const data: DashboardData = {
    tenant: { value: null, error: null },
    quota: { value: { used: 1, limit: 100, source: 'logs' }, error: null },
    queues: {
      value: {
        ok: true,
        stuckAfterMs: 60_000,
        queues,
        outbound: {
          delivery: 'relay',
          queued: 0,
          deferred: 0,
          inFlight: 0,
          heldDestinations: 0,
          oldestWaitingAgeMs: 0,
          stuck: false,
        },
      },
      error: null,
    },
    recent: { value: [entry('1', 'SENT', 'ada@example.com', 'Welcome')], error: null },
    failingWebhooks: { value: [], error: null },
    warnings: {
      value: [
        {
          code: 'SYSTEM_SENDER_NOT_ROUTABLE',
          message: 'System mail comes from svc <no-reply@localhost>, an address no receiver accepts mail from.',
          fix: 'Set defaultFromAddress to an address on a domain you own, then verify that domain.',
        },
      ],
      error: null,
    },
    loadedAt: '',
  };
  const render60x15 = async (rows: number) => {
    const screen = render(
      <Dashboard
        load={async () => data}
        onAction={() => {}}
        onExit={() => {}}
        refreshMs={60_000}
        columns={60}
        rows={rows}
      />,
    );
    await tick(60);
    const frame = screen.lastFrame()!;
    screen.unmount();
    return frame;
  };
  const small = await render60x15(15);
  const lines = small.split('\n');
  assert.ok(lines.length <= 15, `${lines.length} lines:\n${small}`);
  assert.match(lines[0], 'svc dashboard');
  assert.match(lines.at(-1)!, 'q quit');
  assert.match(small, /send\s+depth\s+7 running\s+2/);
  assert.match(small, '5 more idle');
  assert.match(small, '! System mail comes from svc', 'a warning keeps one line');
  assert.not.match(small, 'Fix:');
  assert.not.match(small, /webhook\s+depth/);
  const tall = await render60x15(40);
  assert.match(tall, /webhook\s+depth\s+0/, 'every queue has its line where there is room');
  assert.not.match(tall, 'more idle');
  assert.match(tall, 'Fix: Set defaultFromAddress', 'where there is room the warning says how to fix it');
});

test.run();
