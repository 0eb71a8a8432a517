// Ink screens added or fixed in the second CLI pass: keystroke bursts in the sign-in form, the masked
// password prompt of `svc register`.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import React from 'react';
import { render } from 'ink-testing-library';
import { LoginForm } from '../cli/ui/LoginForm.tsx';
import { PasswordPrompt } from '../cli/ui/PasswordPrompt.tsx';

const tick = (ms = 30) => new Promise((resolve) => setTimeout(resolve, ms));

test('LoginForm: a burst of Backspaces in one chunk deletes as many characters, none is lost or typed', async () => {
  let submitted: string | null = null;
  const { stdin, lastFrame, unmount } = render(<LoginForm baseUrl="x" submitCredentials={async (email, password) => {
    submitted = `${email} ${password}`;
    return 'signed-in';
  }} submitCode={async () => {}} onDone={() => {}} onCancel={() => {}} />);
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
  const { stdin, lastFrame, unmount } = render(<PasswordPrompt title="Choose a password" confirm minLength={10} onDone={(value) => (done = value)} onCancel={() => assert.unreachable()} />);
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

test.run();
