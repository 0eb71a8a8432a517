// The svc CLI as a CI pipeline uses it (SVC_API_KEY, --json, exit codes) and as an admin uses it for
// templates, domains, webhooks and suppressions, against a real daemon.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createApiKey, createWorld } from './helpers/fixtures.ts';
import { listen, type SvcRun } from './helpers/svc-cli.ts';
import { InProcessCli, operationMatchers } from './helpers/svc-inprocess.ts';
import { EmailLog } from '../daemon/modules/emails/model.ts';
import { Suppression } from '../daemon/modules/suppressions/model.ts';
import { waitFor } from './helpers/wait.ts';

let ctx: TestContext;
let cli: InProcessCli;
let world: Awaited<ReturnType<typeof createWorld>>;
let ci: Record<string, string>;
const files = mkdtempSync(join(tmpdir(), 'svc-cli-files-'));
const sentIds: string[] = [];

test.before(async () => {
  ctx = await createTestContext();
  const document = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  cli = new InProcessCli(await listen(ctx), operationMatchers(document));
  world = await createWorld(ctx.app);
  ci = { SVC_API_KEY: world.key.key, SVC_TENANT_ID: world.tenantId };
  cli.writeProfile({ accessToken: world.owner.token, tenantId: world.tenantId, tenantName: 'Acme' });
});
test.after(async () => {
  cli?.cleanup();
  await ctx?.close();
});

const send = (extra: string[] = []) =>
  cli.run(
    [
      'send',
      '--to',
      'ada@example.com',
      '--from',
      'hello@acme.test',
      '--subject',
      'Hi {{ name }}',
      '--text',
      'Hello',
      '--json',
      ...extra,
    ],
    { env: ci },
  );

test('send with SVC_API_KEY prints id and status; the log row exists in the tenant', async () => {
  const run = await send(['--tag', 'welcome']);
  assert.is(run.code, 0, run.stdout + run.stderr);
  assert.is(run.json.status, 'QUEUED');
  assert.type(run.json.messageId, 'string');
  const row = await EmailLog.findByPk(run.json.id);
  assert.is(row?.tenantId, world.tenantId);
  assert.equal(row?.tags, ['welcome']);
  sentIds.push(run.json.id);
});

test('--idempotency-key returns the first answer for the same body', async () => {
  const first = await send(['--idempotency-key', 'order-1']);
  const second = await send(['--idempotency-key', 'order-1']);
  assert.is(first.code, 0, first.stdout);
  assert.is(second.json.id, first.json.id);
  sentIds.push(first.json.id);
});

test('send flags are checked before any request: missing --from, bad --data, bad --schedule are exit 2', async () => {
  const noFrom = await cli.run(['send', '--to', 'a@example.com', '--subject', 'x', '--text', 'y', '--json'], {
    env: ci,
  });
  assert.is(noFrom.code, 2);
  assert.match(noFrom.json.error.message, '--from');
  const badData = await cli.run(
    ['send', '--to', 'a@example.com', '--template', 'welcome', '--data', '{nope', '--json'],
    { env: ci },
  );
  assert.is(badData.code, 2);
  assert.match(badData.json.error.message, '--data is not valid JSON');
  const badTime = await send(['--schedule', 'next tuesday']);
  assert.is(badTime.code, 2);
  const noTo = await cli.run(['send', '--from', 'a@acme.test', '--subject', 'x', '--text', 'y'], { env: ci });
  assert.is(noTo.code, 2, 'oclif requires --to');
});

test('the API refuses a bad address with its own sentence and exit 1', async () => {
  const run = await cli.run(
    ['send', '--to', 'not-an-address', '--from', 'hello@acme.test', '--subject', 's', '--text', 't', '--json'],
    { env: ci },
  );
  assert.is(run.code, 1, run.stdout);
  assert.is(run.json.error.status, 400);
  assert.type(run.json.error.message, 'string');
});

test('send --schedule +1h creates a PENDING scheduled send', async () => {
  const run = await send(['--schedule', '+1h', '--timezone', 'UTC']);
  assert.is(run.code, 0, run.stdout + run.stderr);
  assert.is(run.json.status, 'PENDING');
  assert.ok(Date.parse(run.json.scheduledFor) > Date.now() + 50 * 60_000);
});

test('logs list filters and logs show gives the detail; another id is exit 1', async () => {
  const list = await cli.run(['logs', 'list', '--tag', 'welcome', '--json'], { env: ci });
  assert.is(list.code, 0, list.stderr);
  assert.equal(
    list.json.data.map((log: { id: string }) => log.id),
    [sentIds[0]],
  );
  const show = await cli.run(['logs', 'show', sentIds[0], '--json'], { env: ci });
  assert.is(show.json.id, sentIds[0]);
  assert.is(show.json.bodyText, 'Hello');
  const human = await cli.run(['logs', 'show', sentIds[0]], { env: ci });
  assert.match(human.stdout, 'ada@example.com');
  assert.match(human.stderr, 'API key (SVC_API_KEY)', 'the header names how the CLI acts');
  const missing = await cli.run(['logs', 'show', '00000000-0000-4000-8000-000000000000', '--json'], { env: ci });
  assert.is(missing.code, 1);
  assert.is(missing.json.error.status, 404);
});

test('logs list walks by cursor (--all, --cursor) and tenants retention shows and shortens the horizons', async () => {
  const all = await cli.run(['logs', 'list', '--limit', '1', '--all', '--json'], { env: ci });
  assert.is(all.code, 0, all.stderr);
  const expected = (
    await EmailLog.findAll({
      where: { tenantId: world.tenantId },
      order: [
        ['createdAt', 'DESC'],
        ['id', 'DESC'],
      ],
    })
  ).map((log) => log.id);
  assert.ok(expected.length >= 2);
  assert.equal(
    all.json.data.map((log: { id: string }) => log.id),
    expected,
    'every log once, newest first',
  );
  const first = await cli.run(['logs', 'list', '--limit', '1'], { env: ci });
  const cursor = /--cursor (\S+)/.exec(first.stdout)?.[1];
  assert.ok(cursor, first.stdout);
  const second = await cli.run(['logs', 'list', '--limit', '1', '--cursor', cursor!, '--json'], { env: ci });
  assert.equal(
    second.json.data.map((log: { id: string }) => log.id),
    [expected[1]],
  );

  const shorten = await cli.run(['tenants', 'retention', '--bodies', '5', '--json']);
  assert.is(shorten.code, 0, shorten.stderr);
  assert.equal(
    [shorten.json.effective.bodiesDays, shorten.json.overrides.bodiesDays, shorten.json.effective.logsDays],
    [5, 5, 60],
  );
  const shown = await cli.run(['tenants', 'retention']);
  assert.match(shown.stdout, /bodies\s+5 days \(override; platform default 30\)/);
  const tooLong = await cli.run(['tenants', 'retention', '--logs', '999', '--json']);
  assert.is(tooLong.code, 1, tooLong.stdout);
  const cleared = await cli.run(['tenants', 'retention', '--bodies', 'default', '--json']);
  assert.equal(cleared.json.overrides.bodiesDays, null);
});

/** Open TCP connections to the test daemon: the tail's stream is one. */
function openConnections(): Promise<number> {
  return new Promise((resolve, reject) =>
    ctx.app.server.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );
}

test('logs tail --json follows new sends through the event stream', async () => {
  const tail = cli.run(['logs', 'tail', '--json', '--backlog', '0', '--count', '1', '--timeout', '60'], {
    env: ci,
  });
  let done: SvcRun | null = null;
  void tail.then((run) => (done = run));
  const fired: string[] = [];
  // The stream is the tail's first request: once it is connected, sends reach it. A send in the
  // moment before the stream reads its start is left out, so keep sending until it reports one.
  await waitFor('the tail to connect', async () => done !== null || (await openConnections()) > 0, {
    timeoutMs: 30_000,
  });
  for (let i = 0; i < 40 && !done; i++) {
    const response = await ctx.app.inject({
      method: 'POST',
      url: '/emails/send',
      headers: world.asKey,
      payload: { from: 'hello@acme.test', to: 'tail@example.com', subject: `tail ${i}`, textBody: 'x' },
    });
    fired.push(response.json().id);
    await waitFor('the tail to report a send', () => done !== null, { timeoutMs: 1500 }).catch(() => undefined);
  }
  const run = await tail;
  assert.is(run.code, 0, run.stderr);
  const lines = run.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  assert.is(lines.length, 1);
  assert.ok(fired.includes(lines[0].id), 'the line is one of the sends made while tailing');
  assert.equal(lines[0].to, ['tail@example.com']);
  assert.not.match(run.stderr, 'polling', 'the stream was used, not the fallback');
});

test('templates push creates from an .html file with front-matter, publishes, is idempotent, and send --template uses it', async () => {
  const file = join(files, 'welcome.html');
  writeFileSync(
    file,
    '---\nslug: welcome\nname: Welcome\nsubject: "Welcome, {{ name }}"\n---\n<p>Hello {{ name }}</p>\n',
  );
  const created = await cli.run(['templates', 'push', file, '--publish', '--json']);
  assert.is(created.code, 0, created.stdout + created.stderr);
  assert.is(created.json[0].created, true);
  assert.is(created.json[0].published, true);
  assert.is(created.json[0].version, 1);
  const again = await cli.run(['templates', 'push', file, '--json']);
  assert.is(again.json[0].changed, false, 'an unchanged file creates no version');
  assert.is(again.json[0].version, 1);

  writeFileSync(
    file,
    '---\nslug: welcome\nname: Welcome\nsubject: "Welcome, {{ name }}"\n---\n<p>Hi {{ name }}!</p>\n',
  );
  const changed = await cli.run(['templates', 'push', file, '--json']);
  assert.is(changed.code, 0, changed.stdout);
  assert.is(changed.json[0].changed, true);
  assert.is(changed.json[0].version, 2);
  assert.is(changed.json[0].published, false);
  const publish = await cli.run(['templates', 'publish', 'welcome', '--json']);
  assert.is(publish.code, 0, publish.stdout);
  assert.is(publish.json.version, 2);

  const show = await cli.run(['templates', 'show', 'welcome', '--json']);
  assert.is(show.json.versions.length, 2);
  const list = await cli.run(['templates', 'list', '--json']);
  assert.equal(
    list.json.data.map((t: { slug: string }) => t.slug),
    ['welcome'],
  );

  const out = join(files, 'pulled.html');
  const pull = await cli.run(['templates', 'pull', 'welcome', '--out', out, '--json']);
  assert.is(pull.code, 0, pull.stdout);
  const pulled = readFileSync(out, 'utf8');
  assert.match(pulled, 'slug: "welcome"');
  assert.match(pulled, '<p>Hi {{ name }}!</p>');
  const roundTrip = await cli.run(['templates', 'push', out, '--json']);
  assert.is(roundTrip.json[0].changed, false, 'a pulled file pushes back unchanged');

  const sent = await cli.run(
    [
      'send',
      '--to',
      'grace@example.com',
      '--from',
      'hello@acme.test',
      '--template',
      'welcome',
      '--data',
      '{"name":"Grace"}',
      '--json',
    ],
    { env: ci },
  );
  assert.is(sent.code, 0, sent.stdout + sent.stderr);
  const row = await EmailLog.findByPk(sent.json.id);
  assert.equal(row?.data, { name: 'Grace' });
});

test('templates push failures have exit codes CI can trust', async () => {
  const noSubject = join(files, 'nosubject.html');
  writeFileSync(noSubject, '<p>x</p>');
  const missing = await cli.run(['templates', 'push', noSubject, '--json']);
  assert.is(missing.code, 2);
  assert.match(missing.json.error.message, 'subject');
  const wrongType = join(files, 'notes.txt');
  writeFileSync(wrongType, 'x');
  assert.is((await cli.run(['templates', 'push', wrongType, '--subject', 's'])).code, 2);
  const brokenJsx = join(files, 'broken.tsx');
  writeFileSync(brokenJsx, '/*\n---\nslug: broken\nsubject: Broken\n---\n*/\nexport default function Email( {\n');
  const refused = await cli.run(['templates', 'push', brokenJsx, '--json']);
  assert.ok(refused.code === 1, `an invalid template is refused by the API (exit ${refused.code}: ${refused.stdout})`);
  const unknown = await cli.run(['templates', 'publish', 'nope', '--json']);
  assert.is(unknown.code, 1);
  const reader = await createApiKey(world.tenantId, { scopes: ['templates:read'] });
  const keyOnly = await cli.run(['templates', 'show', 'welcome', '--json'], { env: { SVC_API_KEY: reader.key } });
  assert.is(keyOnly.code, 1, 'template details need an admin session or templates:write (403)');
  assert.is(keyOnly.json.error.status, 403);
});

test('suppressions add, list and remove; the row is in the tenant', async () => {
  const add = await cli.run(['suppressions', 'add', 'bounce@example.com', '--reason', 'bounce', '--json'], { env: ci });
  assert.is(add.code, 0, add.stdout);
  assert.is(
    (await Suppression.findOne({ where: { tenantId: world.tenantId, email: 'bounce@example.com' } }))?.reason,
    'bounce',
  );
  const list = await cli.run(['suppressions', 'list', '--json'], { env: ci });
  assert.ok(list.json.data.some((row: { email: string }) => row.email === 'bounce@example.com'));
  const remove = await cli.run(['suppressions', 'remove', 'bounce@example.com', '--json'], { env: ci });
  assert.is(remove.code, 0, remove.stdout);
  assert.is(await Suppression.findOne({ where: { tenantId: world.tenantId, email: 'bounce@example.com' } }), null);
  const badReason = await cli.run(['suppressions', 'add', 'x@example.com', '--reason', 'because'], { env: ci });
  assert.is(badReason.code, 2);
});

test('webhooks add shows the secret once, list and deliveries work', async () => {
  const add = await cli.run(
    ['webhooks', 'add', '--url', 'http://127.0.0.1:9/hook', '--event', 'email.sent', '--json'],
    { env: ci },
  );
  assert.is(add.code, 0, add.stdout);
  assert.match(add.json.secret, /^whsec_/);
  const list = await cli.run(['webhooks', 'list', '--json'], { env: ci });
  assert.is(list.json.data[0].id, add.json.id);
  assert.is(list.json.data[0].secret, undefined);
  const deliveries = await cli.run(['webhooks', 'deliveries', add.json.id, '--json'], { env: ci });
  assert.is(deliveries.code, 0, deliveries.stdout);
  assert.equal(deliveries.json.data, []);
  const noEvents = await cli.run(['webhooks', 'add', '--url', 'http://127.0.0.1:9/x'], { env: ci });
  assert.is(noEvents.code, 2);
  assert.match(noEvents.stderr, '--event');
});

test('domains add prints the records; diagnose marks each record and exits 1 while DNS is missing', async () => {
  const add = await cli.run(['domains', 'add', 'mail.example.test', '--json']);
  assert.is(add.code, 0, add.stdout + add.stderr);
  assert.ok(add.json.records.some((record: { record: string }) => record.record === 'dkim'));
  const list = await cli.run(['domains', 'list', '--json']);
  assert.is(list.json.domains[0].name, 'mail.example.test');
  const diagnose = await cli.run(['domains', 'diagnose', 'mail.example.test']);
  assert.is(diagnose.code, 1, diagnose.stdout + diagnose.stderr);
  assert.match(diagnose.stdout, '✗ DKIM');
  assert.match(diagnose.stdout, 'publish: TXT');
  const json = await cli.run(['domains', 'diagnose', 'mail.example.test', '--json']);
  assert.is(json.json.ok, false);
  assert.ok(json.json.publish.length >= 2);
  const unknown = await cli.run(['domains', 'dns', 'other.example.test', '--json'], { asScript: true });
  assert.is(unknown.code, 1);
  assert.match(unknown.json.error.message, 'node bin/svc.js domains add other.example.test');
});

test('daemon status reports readiness and queues; without credentials the queues are skipped', async () => {
  const run = await cli.run(['daemon', 'status', '--json'], { env: ci });
  assert.is(run.code, 0, run.stdout);
  assert.is(run.json.ready.checks.database.ok, true);
  assert.type(run.json.queues?.queues ?? run.json.queuesError, run.json.queues ? 'object' : 'string');
  const anonymous = await cli.run(['daemon', 'status', '--json', '--profile', 'nobody']);
  assert.is(anonymous.json.queues, null);
  assert.match(anonymous.json.queuesError, 'sign in');
});

test('colours follow NO_COLOR even when FORCE_COLOR asks for them', async () => {
  // Spawned: chalk settles its colour level from FORCE_COLOR once, when the process loads it.
  const coloured = await cli.spawn(['logs', 'list'], { env: { ...ci, NO_COLOR: undefined, FORCE_COLOR: '1' } });
  assert.match(coloured.stdout, '\u001b[');
  const plain = await cli.spawn(['logs', 'list'], { env: { ...ci, NO_COLOR: '1', FORCE_COLOR: '1' } });
  assert.not.match(plain.stdout + plain.stderr, '\u001b[');
});

test('db migrate applies migrations without starting the daemon', async () => {
  const external = process.env.DATABASE_URL;
  const env = external
    ? { DATABASE_URL: ctx.databaseUrl }
    : { DATABASE_URL: undefined, DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-cli-db-')) };
  const run = await cli.run(['db', 'migrate', '--json'], { env });
  assert.is(run.code, 0, run.stdout + run.stderr);
  if (external) assert.equal(run.json.applied, [], 'the test database is already up to date');
  else assert.ok(run.json.applied.length > 0);
});

test('the dashboard without a terminal prints one snapshot', async () => {
  const run = await cli.run(['dashboard', '--json']);
  assert.is(run.code, 0, run.stdout);
  assert.is(run.json.tenant.value.id, world.tenantId);
  assert.ok(run.json.recent.value.length > 0);
  assert.is(run.json.quota.value.limit, 100);
  // Spawned: `svc` with no command word is the binary's own help path, not an oclif command.
  const bare = await cli.spawn([]);
  assert.is(bare.code, 0);
  assert.match(bare.stdout, 'USAGE', '`svc` alone without a terminal prints the help');
});

test.run();
