// Issue 49 §5: what the CLI says works as written — Liquid with --data in inline sends, a template's own
// sender, tenants named by name, errors that say what happened. In-process against a real daemon.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { simpleParser } from 'mailparser';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { addVerifiedDomain, createAdmin, createTenant, createWorld } from './helpers/fixtures.ts';
import { listen } from './helpers/svc-cli.ts';
import { InProcessCli, operationMatchers } from './helpers/svc-inprocess.ts';
import { assertErrorBody } from './helpers/error-body.ts';
import { EmailLog } from '../daemon/modules/emails/model.ts';
import { Template } from '../daemon/modules/templates/model.ts';
import { Admin } from '../daemon/modules/auth/model.ts';
import { latestCapturedMessageTo } from '../daemon/mail/system-mail.ts';
import { runJobs } from './helpers/send-jobs.ts';
import { parseShellCommand } from './helpers/shell-words.ts';
import { Config } from '@oclif/core';
import commandNotFound from '../cli/hooks/command-not-found.ts';
import { entryArgs } from '../cli/entry-args.mjs';

const ROOT = new URL('..', import.meta.url).pathname;

let ctx: TestContext;
let cli: InProcessCli;
let world: Awaited<ReturnType<typeof createWorld>>;
const files = mkdtempSync(join(tmpdir(), 'svc-as-written-'));

test.before(async () => {
  ctx = await createTestContext();
  const document = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  cli = new InProcessCli(await listen(ctx), operationMatchers(document));
  world = await createWorld(ctx.app);
  await addVerifiedDomain(ctx.db.sequelize, ctx.deps.secrets, world.tenantId, 'acme.test');
  cli.writeProfile({ accessToken: world.owner.token, tenantId: world.tenantId, tenantName: 'Acme' });
});
test.after(async () => {
  cli?.cleanup();
  rmSync(files, { recursive: true, force: true });
  await ctx?.close();
});

test('send --data renders the inline subject and bodies with Liquid; the log carries the result', async () => {
  const run = await cli.run([
    'send',
    '--to',
    'ada@example.com',
    '--from',
    'hello@acme.test',
    '--subject',
    'Hi {{ name }}',
    '--text',
    'Hello {{ name }}',
    '--html',
    '<p>{{ name }} & {{ html }}</p>',
    '--data',
    '{"name":"Ada","html":"<b>"}',
    '--json',
  ]);
  assert.is(run.code, 0, run.stdout + run.stderr);
  const log = await EmailLog.findByPk(run.json.id);
  assert.is(log?.subject, 'Hi Ada');
  assert.is(log?.textBody, 'Hello Ada');
  // The HTML body escapes data, as a template's does.
  assert.is(log?.htmlBody, '<p>Ada & &lt;b&gt;</p>');
});

test('without --data the inline parts are sent as written', async () => {
  const run = await cli.run([
    'send',
    '--to',
    'ada@example.com',
    '--from',
    'hello@acme.test',
    '--subject',
    'Hi {{ name }}',
    '--text',
    'Hello {{ name',
    '--json',
  ]);
  assert.is(run.code, 0, run.stdout + run.stderr);
  const log = await EmailLog.findByPk(run.json.id);
  assert.is(log?.subject, 'Hi {{ name }}');
  assert.is(log?.textBody, 'Hello {{ name');
});

test('broken Liquid with --data is refused at accept time, naming the field; nothing is queued', async () => {
  const before = await EmailLog.count({ where: { tenantId: world.tenantId } });
  const run = await cli.run([
    'send',
    '--to',
    'ada@example.com',
    '--from',
    'hello@acme.test',
    '--subject',
    'Hi',
    '--text',
    'Hello {% if %}',
    '--data',
    '{"name":"Ada"}',
    '--json',
  ]);
  assert.is(run.code, 1, run.stdout + run.stderr);
  assert.is(run.json.error.code, 'TEMPLATE_INVALID');
  assert.match(run.json.error.message, /^textBody is not valid Liquid/);
  assert.equal(
    run.json.error.details.map((d: { field: string }) => d.field),
    ['textBody'],
  );
  assert.is(await EmailLog.count({ where: { tenantId: world.tenantId } }), before);
});

test('the API renders data into an inline send, refuses broken Liquid with 422, and so does a schedule', async () => {
  const sent = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: world.asKey,
    payload: {
      from: 'hello@acme.test',
      to: 'ada@example.com',
      subject: 'Order {{ order.id }}',
      htmlBody: '<p>{{ order.total | times: 2 }}</p>',
      data: { order: { id: 42, total: 5 } },
    },
  });
  assert.is(sent.statusCode, 202, sent.body);
  const log = await EmailLog.findByPk(sent.json().id);
  assert.is(log?.subject, 'Order 42');
  assert.is(log?.htmlBody, '<p>10</p>');
  const broken = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: world.asKey,
    payload: { from: 'hello@acme.test', to: 'ada@example.com', subject: '{{ x | nope }}', textBody: 'y', data: {} },
  });
  assert.is(broken.statusCode, 422, broken.body);
  assertErrorBody(broken, 422, 'TEMPLATE_INVALID');
  assert.equal(broken.json().details[0].field, 'subject');
  const scheduled = await ctx.app.inject({
    method: 'POST',
    url: '/scheduled-emails',
    headers: world.asKey,
    payload: {
      from: 'hello@acme.test',
      to: 'ada@example.com',
      subject: 'Hi',
      htmlBody: '{% for %}',
      data: {},
      sendAt: new Date(Date.now() + 3_600_000).toISOString(),
    },
  });
  assert.is(scheduled.statusCode, 422, scheduled.body);
  assert.equal(scheduled.json().details[0].field, 'htmlBody');
});

test("a template's from: in front-matter is kept by push and is the sender of a send without --from", async () => {
  const file = join(files, 'welcome.html');
  writeFileSync(
    file,
    '---\nslug: welcome\nsubject: "Welcome, {{ name }}"\nfrom: Acme <hello@acme.test>\n---\n<p>Hi {{ name }}</p>\n',
  );
  const pushed = await cli.run(['templates', 'push', file, '--publish', '--json']);
  assert.is(pushed.code, 0, pushed.stdout + pushed.stderr);
  const template = await Template.findOne({ where: { tenantId: world.tenantId, slug: 'welcome' } });
  assert.is(template?.defaultFrom, 'Acme <hello@acme.test>');
  const sent = await cli.run([
    'send',
    '--to',
    'ada@example.com',
    '--template',
    'welcome',
    '--data',
    '{"name":"Ada"}',
    '--json',
  ]);
  assert.is(sent.code, 0, sent.stdout + sent.stderr);
  const log = await EmailLog.findByPk(sent.json.id);
  assert.match(log!.fromAddress, 'hello@acme.test');
  // A changed sender alone is a change: the push says so and the template keeps the new one.
  writeFileSync(
    file,
    '---\nslug: welcome\nsubject: "Welcome, {{ name }}"\nfrom: news@acme.test\n---\n<p>Hi {{ name }}</p>\n',
  );
  const again = await cli.run(['templates', 'push', file, '--json']);
  assert.is(again.json[0].changed, true, again.stdout);
  const shown = await cli.run(['templates', 'show', 'welcome', '--json']);
  assert.is(shown.json.from, 'news@acme.test');
  // Without a sender of its own, the send still needs --from, and says how to give the template one.
  const cleared = await cli.run(['templates', 'update', 'welcome', '--from', '', '--json']);
  assert.is(cleared.json.from, null, cleared.stdout + cleared.stderr);
  const refused = await cli.run(['send', '--to', 'ada@example.com', '--template', 'welcome', '--json']);
  assert.is(refused.code, 1);
  assert.match(refused.json.error.message, 'has no sender of its own');
});

test('a tenant is named by name wherever one is asked; an unknown name says so', async () => {
  const operator = await createAdmin(ctx.app, { platformAdmin: true });
  const acme = await createTenant(operator.id, 'Acme Mail');
  const profile = { accessToken: operator.token, tenantId: acme, tenantName: 'Acme Mail' };
  cli.writeProfile(profile, 'operator');
  const as = (args: string[]) => cli.run([...args, '--profile', 'operator', '--json']);
  const pool = await as(['pools', 'create', 'shared-1']);
  assert.is(pool.code, 0, pool.stdout + pool.stderr);
  const assigned = await as(['pools', 'assign', 'acme mail', '--pool', 'shared-1']);
  assert.is(assigned.code, 0, assigned.stdout + assigned.stderr);
  assert.equal(
    assigned.json.assignments.map((a: { tenantId: string }) => a.tenantId),
    [acme],
  );
  const members = await as(['members', 'list', '--tenant', 'Acme Mail']);
  assert.is(members.code, 0, members.stdout + members.stderr);
  assert.equal(
    members.json.data.map((m: { adminId: string }) => m.adminId),
    [operator.id],
  );
  for (const args of [
    ['pools', 'assign', 'nope', '--pool', 'shared-1'],
    ['members', 'list', '--tenant', 'nope'],
    ['tenants', 'audit', '--tenant', 'nope'],
  ]) {
    const run = await as(args);
    assert.is(run.code, 1, args.join(' '));
    assert.is(run.json.error.message, 'no tenant named "nope" among yours: see `svc tenants list`.', args.join(' '));
    assert.not.match(run.stdout, 'uuid');
  }
});

test('the invitation mail names the svc command, and it and the Next: hint of register run as printed', async () => {
  const operator = await createAdmin(ctx.app);
  await createTenant(operator.id, 'Invite Co');
  cli.writeProfile({ accessToken: operator.token }, 'inviter');
  const invited = await cli.run([
    'members',
    'invite',
    'newcomer@example.test',
    '--role',
    'developer',
    '--tenant',
    'invite co',
    '--profile',
    'inviter',
    '--json',
  ]);
  assert.is(invited.code, 0, invited.stdout + invited.stderr);
  await runJobs(ctx, 'system');
  const mail = await latestCapturedMessageTo(ctx.db.sequelize, 'newcomer@example.test');
  const text = (await simpleParser(mail!.raw)).text ?? '';
  assert.not.match(text, 'POST ');
  const line = /Or from the command line: (.+)/.exec(text)?.[1];
  assert.ok(line, text);
  const printed = parseShellCommand(line!);
  assert.equal(printed.words.slice(0, 2), ['svc', 'register'], line);
  assert.is(printed.env.SVC_BASE_URL, ctx.config.publicUrl);
  // Run as printed, with the daemon this test listens on standing for PUBLIC_URL's.
  const registered = await cli.run([...printed.words.slice(1), '--password-stdin', '--profile', 'newcomer', '--json'], {
    input: 'correct horse battery staple',
    asScript: true,
  });
  assert.is(registered.code, 0, registered.stdout + registered.stderr);
  // From a clone svc is not on PATH: the next step names the script as it was run.
  const next = parseShellCommand(registered.json.nextStep.split('   (then:')[0]);
  assert.equal(next.words.slice(0, 2), ['node', relative(process.cwd(), join(ROOT, 'bin', 'svc.js'))]);
  const ran = await cli.run([...next.words.slice(2), '--profile', 'newcomer', '--json']);
  assert.is(ran.code, 0, registered.json.nextStep + ran.stdout + ran.stderr);
});

test('a mistyped flag gets one sentence with the closest flag, not the usage; --json names it in details', async () => {
  const send = await cli.run(['send', '--too', 'ada@example.com', '--subject', 'x', '--text', 'y', '--json']);
  assert.is(send.code, 2);
  assert.is(send.json.error.message, '--too (did you mean --to?) is not a flag of svc send. See `svc send --help`.');
  const json = await cli.run(['logs', 'list', '--stauts', 'SENT', '--json']);
  assert.is(json.code, 2);
  assert.equal(json.json.error.details, [{ field: '--stauts', message: 'unknown flag (did you mean --status?)' }]);
});

test('an unknown command: the closest one even with arguments after it, and the closest flag for a flag', async () => {
  const config = await Config.load(ROOT);
  const said = async (argv: string[]) => {
    const id = argv.filter((word) => !word.startsWith('-') || argv.indexOf(word) === 0).join(':');
    let stderr = '';
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => ((stderr += chunk), true)) as typeof process.stderr.write;
    try {
      await commandNotFound.call({} as never, { id, argv, config, context: {} as never });
    } finally {
      process.stderr.write = write;
      process.exitCode = undefined;
    }
    return stderr.trim();
  };
  assert.is(
    await said(['templates', 'pusj', 'welcome.html']),
    '"templates pusj" is not a svc command. Did you mean `svc templates push`? See `svc --help`.',
  );
  assert.match(await said(['--too']), '"--too" is not a svc command: flags go after a command. Did you mean --to (');
  assert.match(await said(['sned']), 'Did you mean `svc send`?');
});

test("global flags alone are the dashboard's in a terminal (svc --profile direct), the help elsewhere", () => {
  assert.equal(entryArgs(['--profile', 'direct'], true), ['dashboard', '--profile', 'direct']);
  assert.equal(entryArgs(['--profile=direct', '--insecure'], true), ['dashboard', '--profile=direct', '--insecure']);
  assert.equal(entryArgs([], true), ['dashboard']);
  assert.equal(entryArgs(['--profile', 'direct'], false), ['--help']);
  assert.is(entryArgs([], false), undefined);
  assert.is(entryArgs(['send', '--profile', 'direct'], true), undefined);
  assert.is(entryArgs(['--profile'], true), undefined);
});

test("SVC_API_KEY=nonsense: the error names the key and the environment; the banner shows the key's tenant, not the profile's", async () => {
  const human = await cli.run(['logs', 'list'], { env: { SVC_API_KEY: 'nonsense' } });
  assert.is(human.code, 3);
  assert.match(human.stderr, "API key (SVC_API_KEY) · the key's tenant");
  assert.not.match(human.stderr, 'Acme');
  const json = await cli.run(['logs', 'list', '--json'], { env: { SVC_API_KEY: 'nonsense' } });
  assert.is(
    json.json.error.message,
    'The API key is invalid: it comes from SVC_API_KEY in the environment. Set SVC_API_KEY to a live key of the tenant, or unset it to use your sign-in.',
  );
  assert.not.match(json.stdout, 'access token');
  // A real key of the tenant works with another tenant in the profile: the key decides.
  const other = await createWorld(ctx.app);
  cli.writeProfile({ accessToken: other.owner.token, tenantId: other.tenantId, tenantName: 'Other' }, 'other');
  const ok = await cli.run(['logs', 'list', '--profile', 'other', '--json'], { env: { SVC_API_KEY: world.key.key } });
  assert.is(ok.code, 0, ok.stdout + ok.stderr);
});

test('a template file too large to parse gets the size error the 195 KB one gets, in check and preview', async () => {
  const write = (name: string, kb: number) => {
    const file = join(files, name);
    writeFileSync(file, `---\nslug: big\nsubject: Big\n---\n<p>${'x'.repeat(kb * 1024)}</p>\n`);
    return file;
  };
  const mid = await cli.run(['templates', 'check', write('mid.html', 195), '--json']);
  const huge = await cli.run(['templates', 'check', write('huge.html', 10 * 1024), '--json']);
  const codes = (run: typeof mid) =>
    (run.json.files as { findings: { code: string }[] }[]).flatMap((file) => file.findings.map((f) => f.code));
  assert.equal(codes(mid), ['HTML_TOO_LARGE'], mid.stdout);
  assert.equal(codes(huge), ['HTML_TOO_LARGE'], huge.stdout);
  assert.not.match(huge.stdout, 'parse length');
  const preview = await cli.run(['templates', 'preview', join(files, 'huge.html'), '--json']);
  assert.is(preview.json.error.code, 'HTML_TOO_LARGE', preview.stdout);
  assert.match(preview.json.error.message, /^The HTML is 102[0-9]{2} KB; Gmail clips/);
});

test('a dead verification or reset link offers a form that mails a new link, not an API call', async () => {
  const unverified = await Admin.create({ email: 'late@example.test', passwordHash: 'x', isPlatformAdmin: false });
  const origin = new URL(ctx.config.publicUrl).origin;
  for (const purpose of ['verify-email', 'reset-password']) {
    const dead = await ctx.app.inject({ method: 'GET', url: `/${purpose}?token=${'x'.repeat(40)}` });
    assert.is(dead.statusCode, 410);
    assert.not.match(dead.body, 'POST /auth');
    assert.not.match(dead.body, 'svc ');
    assert.match(dead.body, `<form method="post" action="${purpose}/new-link?lang=en">`);
    const foreign = await ctx.app.inject({
      method: 'POST',
      url: `/${purpose}/new-link`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://elsewhere.test' },
      payload: 'email=late%40example.test',
    });
    assert.is(foreign.statusCode, 403);
    const sent = await ctx.app.inject({
      method: 'POST',
      url: `/${purpose}/new-link?lang=en`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
      payload: 'email=late%40example.test',
    });
    assert.is(sent.statusCode, 303, sent.body);
    assert.is(sent.headers.location, 'new-link/sent?lang=en');
    const page = await ctx.app.inject({ method: 'GET', url: `/${purpose}/new-link/sent?lang=en` });
    assert.match(page.body, 'a new one is on its way');
    await runJobs(ctx, 'system');
    const mail = await latestCapturedMessageTo(ctx.db.sequelize, unverified.email);
    assert.match((await simpleParser(mail!.raw)).text ?? '', `/${purpose}?token=`);
  }
});

test.run();
