// The README's first run, as a person types it, against `svc daemon start` (what `npm start` runs) with
// nothing configured but a data directory: `svc register` creates the first tenant and prints the next step,
// `svc send` shows a sent, captured e-mail, `svc logs tail` shows sends live, and the verification mail the
// daemon captured is readable with `svc platform mail` and usable with `svc verify-email`. The only file that
// spawns `svc` for every step: the other CLI tests run commands in-process.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestDatabase, type TestDatabase } from './helpers/context.ts';
import { killDaemonProcesses, startDaemonProcess, type DaemonProcess } from './helpers/daemon-process.ts';
import { CliWorld, type SvcRun } from './helpers/svc-cli.ts';

const EMAIL = 'you@example.com';
const PASSWORD = 'first-run-password';
let database: TestDatabase;
let daemon: DaemonProcess;
let cli: CliWorld;

test.before(async () => {
  database = await createTestDatabase();
  daemon = await startDaemonProcess({
    DATA_DIR: database.dataDir,
    ...(database.url ? { DATABASE_URL: database.url } : {}),
  });
  cli = new CliWorld(daemon.url);
});
test.after(async () => {
  cli?.cleanup();
  killDaemonProcesses();
  await daemon?.exit;
  await database?.drop();
});

test('register creates the first admin and tenant and prints the next step; send then works with no NO_TENANT', async () => {
  const register = await cli.run(['register', '--email', EMAIL, '--password-stdin'], { input: PASSWORD });
  assert.is(register.code, 0, register.stdout + register.stderr);
  assert.match(register.stdout, 'Tenant: example.com');
  // Spawned from the clone as `node bin/svc.js`, the next step is printed the way svc was run (issue 49 §5).
  assert.match(register.stdout, `Next: node bin/svc.js send --to ${EMAIL} --from hello@example.com`);
  assert.not.match(register.stdout + register.stderr, PASSWORD);

  const send = await cli.run([
    'send',
    '--to',
    EMAIL,
    '--from',
    'hello@example.com',
    '--subject',
    'Hello',
    '--text',
    'It works',
    '--sync',
    '--json',
  ]);
  assert.is(send.code, 0, send.stdout + send.stderr);
  assert.is(send.json.status, 'SENT');
  const shown = await cli.run(['logs', 'show', send.json.id, '--json']);
  assert.is(shown.json.status, 'SENT');
  assert.is(shown.json.captured, true);
  assert.match(shown.json.raw, 'Subject: Hello');
  assert.match(shown.json.raw, 'It works');
});

test('logs tail shows a send live', async () => {
  const tail = cli.run(['logs', 'tail', '--json', '--backlog', '0', '--count', '1', '--timeout', '60'], {
    timeoutMs: 70_000,
  });
  let done: SvcRun | null = null;
  void tail.then((run) => (done = run));
  const sent: string[] = [];
  // The tail needs a moment to connect: send until it has reported one.
  for (let i = 0; i < 20 && !done; i++) {
    const send = await cli.run([
      'send',
      '--to',
      EMAIL,
      '--from',
      'hello@example.com',
      '--subject',
      `live ${i}`,
      '--text',
      'x',
      '--json',
    ]);
    sent.push(send.json.id);
  }
  const run = await tail;
  assert.is(run.code, 0, run.stderr);
  console.log(`logs tail reported a send after ${sent.length} send(s)`);
  const line = JSON.parse(run.stdout.trim().split('\n')[0]);
  assert.ok(sent.includes(line.id), 'the line is one of the sends made while tailing');
});

test('the captured verification mail is readable with svc platform mail, and its token verifies the address', async () => {
  const list = await cli.run(['platform', 'mail', '--to', EMAIL, '--json']);
  assert.is(list.code, 0, list.stdout + list.stderr);
  assert.is(list.json.data.length, 1);
  assert.equal(list.json.data[0].to, [EMAIL]);
  const latest = await cli.run(['platform', 'mail', '--to', EMAIL, '--latest', '--json']);
  const link = (latest.json.links as string[]).find((url) => url.includes('/verify-email?token='));
  assert.ok(link, latest.json.text);
  const human = await cli.run(['platform', 'mail', latest.json.id]);
  assert.match(human.stdout, link!);
  const token = new URL(link!).searchParams.get('token')!;
  const verified = await cli.run(['verify-email', '--token', token, '--json']);
  assert.is(verified.code, 0, verified.stdout + verified.stderr);
  const me = await cli.run(['api', 'getAuthMe', '--json']);
  assert.is(me.json.emailVerified, true, me.stdout);
  const again = await cli.run(['verify-email', '--token', token, '--json']);
  assert.is(again.code, 1, 'a used token is refused');
});

test('an invitation mailed to a new address joins with svc register --invitation, even with registration closed', async () => {
  await cli.run(['platform', 'settings', 'set', 'registrationOpen=false', '--json']);
  const invited = await cli.run(['members', 'invite', 'ada@example.org', '--role', 'developer', '--json']);
  assert.is(invited.code, 0, invited.stdout + invited.stderr);
  let mail: SvcRun | undefined;
  for (let i = 0; i < 30 && !mail?.json?.links; i++) {
    mail = await cli.run(['platform', 'mail', '--to', 'ada@example.org', '--latest', '--json']);
  }
  const link = (mail!.json.links as string[]).find((url) => url.includes('invitation='));
  assert.ok(link, mail!.stdout);
  const token = new URL(link!).searchParams.get('invitation')!;
  const joined = await cli.run(
    ['register', '--email', 'ada@example.org', '--invitation', token, '--password-stdin', '--profile', 'ada', '--json'],
    { input: 'ada-password-123' },
  );
  assert.is(joined.code, 0, joined.stdout + joined.stderr);
  assert.is(joined.json.tenant.name, 'example.com', 'the tenant of the invitation, and no new one');
  const members = await cli.run(['members', 'list', '--json']);
  const ada = members.json.data.find((m: { email: string }) => m.email === 'ada@example.org');
  assert.is(ada?.role, 'developer');
});

test.run();
