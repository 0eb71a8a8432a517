// Rough edges an operator met in a real terminal (issue 26, section 4): the sign-in form showed an
// example address as if it were typed, and Enter refused it; the paused log tail said "live" and
// "paused" at once; the register prompt kept "At least 10 characters." while a long enough password
// was being typed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import React from 'react';
import { render } from 'ink-testing-library';
import { LoginForm } from '../cli/ui/LoginForm.tsx';
import { LogTail } from '../cli/ui/LogTail.tsx';
import { PasswordPrompt } from '../cli/ui/PasswordPrompt.tsx';
import type { LogEntry } from '../cli/services/log-feed.ts';

/** Waits until the last frame satisfies `check` (Ink renders asynchronously, slower on a loaded machine). */
async function frameWhere(lastFrame: () => string | undefined, check: (frame: string) => boolean, what: string) {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const frame = lastFrame() ?? '';
    if (check(frame)) return frame;
    if (Date.now() > deadline) throw new Error(`the screen never showed ${what}:\n${frame}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test('LoginForm: the empty e-mail field shows a hint after the cursor, not an address; its complaint goes once an address is typed', async () => {
  let submitted: string | null = null;
  const { stdin, lastFrame, unmount } = render(
    <LoginForm
      baseUrl="https://mail.example.com"
      submitCredentials={async (email, password) => {
        submitted = `${email} ${password}`;
        return 'signed-in';
      }}
      submitCode={async () => {}}
      onDone={() => {}}
      onCancel={() => assert.unreachable()}
    />,
  );
  let frame = await frameWhere(lastFrame, (f) => f.includes('E-mail'), 'the form');
  const emailLine = frame.split('\n').find((line) => line.includes('E-mail'))!;
  assert.match(emailLine, /E-mail {2}type your e-mail address/, 'the cursor (a blank cell here) comes first');
  assert.not.match(emailLine.replace('E-mail', ''), /@/, 'nothing that looks like an address typed already');

  stdin.write('\r');
  frame = await frameWhere(lastFrame, (f) => f.includes('Type the e-mail address'), 'the complaint');
  assert.not.match(frame, 'Password', 'Enter on the hint does not go on');

  stdin.write('ops@mail.example.com');
  frame = await frameWhere(lastFrame, (f) => f.includes('ops@mail.example.com'), 'the typed address');
  assert.not.match(frame, 'Type the e-mail address', 'the complaint went while typing');
  stdin.write('\r');
  await frameWhere(lastFrame, (f) => f.includes('Password'), 'the password field');
  stdin.write('secret-password\r');
  const deadline = Date.now() + 5_000;
  while (submitted === null && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.is(submitted, 'ops@mail.example.com secret-password');
  unmount();
});

function entry(id: string, to: string): LogEntry {
  return {
    id,
    status: 'SENT',
    to: [to],
    subject: `subject ${id}`,
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

test('LogTail: paused shows "paused" and not "live"; resumed, "live" again', async () => {
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
  const { stdin, lastFrame, unmount } = render(
    <LogTail
      source={source}
      loadDetail={() => Promise.reject(new Error('no detail in this test'))}
      onExit={() => {}}
    />,
  );
  push(entry('1', 'ada@example.com'));
  await frameWhere(lastFrame, (f) => f.includes('ada@example.com') && f.includes('● live'), 'a live entry');

  stdin.write('p');
  let header = (await frameWhere(lastFrame, (f) => f.includes('paused'), 'the pause')).split('\n')[0];
  const counted = /❚❚ paused \((\d+) new\)/.exec(header);
  assert.ok(counted, header);
  assert.not.match(header, 'live');
  push(entry('2', 'grace@example.com'));
  const more = `paused (${Number(counted[1]) + 1} new)`;
  header = (await frameWhere(lastFrame, (f) => f.includes(more), 'the count of new entries')).split('\n')[0];
  assert.not.match(header, 'live', 'still one state while entries arrive');

  stdin.write('p');
  const resumed = await frameWhere(lastFrame, (f) => f.includes('grace@example.com'), 'the resumed view');
  assert.match(resumed.split('\n')[0], '● live');
  assert.not.match(resumed, 'paused');
  unmount();
});

test('PasswordPrompt (svc register): "At least 10 characters." goes as soon as the password is long enough', async () => {
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
  await frameWhere(lastFrame, (f) => f.includes('At least 10 characters.'), 'the length complaint');
  stdin.write('-but');
  let frame = await frameWhere(lastFrame, (f) => f.includes('*'.repeat(9)), 'nine characters');
  assert.match(frame, 'At least 10 characters.', 'nine characters: the complaint still holds');
  stdin.write('x');
  frame = await frameWhere(lastFrame, (f) => !f.includes('At least 10 characters.'), 'the complaint gone');
  assert.match(frame, '*'.repeat(10));
  assert.not.match(frame, 'Again', 'gone without pressing Enter');
  stdin.write('\r');
  await frameWhere(lastFrame, (f) => f.includes('Again'), 'the second field');
  stdin.write('short-butx\r');
  const deadline = Date.now() + 5_000;
  while (done === null && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.is(done, 'short-butx');
  unmount();
});

test.run();
