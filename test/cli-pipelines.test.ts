// svc in a CI pipeline with only SVC_API_KEY: one error object for every --json failure and no secret
// printed, typo suggestions, validation fields, pushing many files and folders with a templates:write
// key, and the template gate (check, diff, preview) against a real daemon.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { addVerifiedDomain, createApiKey, createWorld } from './helpers/fixtures.ts';
import { listen, type SvcRun } from './helpers/svc-cli.ts';
import { InProcessCli, operationMatchers } from './helpers/svc-inprocess.ts';
import { Template } from '../daemon/modules/templates/model.ts';

let ctx: TestContext;
let cli: InProcessCli;
let world: Awaited<ReturnType<typeof createWorld>>;
let ci: Record<string, string>;
const files = mkdtempSync(join(tmpdir(), 'svc-cli-gate-'));

test.before(async () => {
  ctx = await createTestContext();
  const document = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  cli = new InProcessCli(await listen(ctx), operationMatchers(document));
  world = await createWorld(ctx.app);
  ci = { SVC_API_KEY: world.key.key };
});
test.after(async () => {
  cli?.cleanup();
  await ctx?.close();
});

const write = (name: string, body: string) => {
  const path = join(files, name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, body);
  return path;
};
const noSecret = (run: SvcRun) => {
  assert.not.match(run.stdout + run.stderr, world.key.key, 'the API key is never printed');
  assert.not.match(run.stdout + run.stderr, world.key.key.slice(9), 'not even its secret part');
};

test('--json flag mistakes print the one contract error object, small, with no secret (exit 2)', async () => {
  for (const args of [
    ['send', '--json', '--bogus'],
    ['send', '--json'],
    ['logs', 'show', '--json'],
    ['send', '--json', 'extra'],
  ]) {
    const run = await cli.run(args, { env: ci });
    assert.is(run.code, 2, `${args.join(' ')}: ${run.stdout}`);
    assert.ok(run.stdout.length < 2000, `${args.join(' ')} printed ${run.stdout.length} bytes`);
    assert.equal(Object.keys(run.json), ['error']);
    assert.is(run.json.error.code, 'USAGE');
    assert.type(run.json.error.message, 'string');
    assert.ok(Array.isArray(run.json.error.details));
    assert.is(run.json.error.exitCode, 2);
    noSecret(run);
  }
  const unknown = await cli.run(['send', '--json', '--bogus'], { env: ci });
  assert.equal(unknown.json.error.details, [{ field: '--bogus', message: 'unknown flag' }]);
  const missing = await cli.run(['send', '--json'], { env: ci });
  assert.equal(missing.json.error.details, [{ field: '--to', message: 'missing required flag' }]);
});

test('API refusals in --json carry code, message and details; without --json each field is printed', async () => {
  const json = await cli.run(
    ['send', '--to', 'not-an-address', '--from', 'hello@acme.test', '--subject', 's', '--text', 't', '--json'],
    { env: ci },
  );
  assert.is(json.code, 1, json.stdout);
  assert.is(json.json.error.status, 400);
  assert.ok(json.json.error.details.length >= 1);
  const field = json.json.error.details[0].field as string;
  const human = await cli.run(
    ['send', '--to', 'not-an-address', '--from', 'hello@acme.test', '--subject', 's', '--text', 't'],
    { env: ci },
  );
  assert.is(human.code, 1);
  assert.match(human.stderr, `${field}: ${json.json.error.details[0].message}`);
  noSecret(json);
  noSecret(human);
});

test('a typo names the closest command, with spaces (exit 2); --json gets the error object', async () => {
  // Spawned: an unknown command word is oclif's command_not_found hook in the binary, before any command runs.
  const sned = await cli.spawn(['sned']);
  assert.is(sned.code, 2);
  // Spawned from the clone as `node bin/svc.js`, the suggestion is written the way it was run (issue 49 §5).
  assert.match(sned.stderr, 'Did you mean `node bin/svc.js send`?');
  const tenant = await cli.spawn(['tenant', 'list']);
  assert.is(tenant.code, 2);
  assert.match(tenant.stderr, '"tenant list" is not a svc command. Did you mean `node bin/svc.js tenants list`?');
  assert.not.match(tenant.stderr, ':list');
  const json = await cli.spawn(['tmplates', 'push', '--json']);
  assert.is(json.code, 2);
  assert.is(json.json.error.code, 'COMMAND_NOT_FOUND');
  assert.match(json.json.error.message, 'node bin/svc.js templates push');
});

test('push takes many files and folders with SVC_API_KEY alone; --publish publishes each', async () => {
  const welcome = write(
    'many/welcome.html',
    '---\nsubject: "Welcome, {{ name }}"\ndata: {"name":"Ada"}\n---\n<p>Hello {{ name }}</p>\n',
  );
  write('many/nested/receipt.liquid', '---\nslug: receipt\nsubject: Your receipt\n---\n<p>Total: 10</p>\n');
  write('many/notes.txt', 'not a template');
  const other = write('single/invite.html', '---\nsubject: Join us\n---\n<p>Join</p>\n');
  const run = await cli.run(['templates', 'push', join(files, 'many'), other, '--publish', '--json'], { env: ci });
  assert.is(run.code, 0, run.stdout + run.stderr);
  assert.equal(run.json.map((r: { slug: string }) => r.slug).sort(), ['invite', 'receipt', 'welcome']);
  assert.ok(run.json.every((r: { published: boolean; created: boolean }) => r.published && r.created));
  const stored = await Template.findAll({ where: { tenantId: world.tenantId } });
  assert.equal(stored.map((t) => t.slug).sort(), ['invite', 'receipt', 'welcome']);
  const again = await cli.run(['templates', 'push', welcome, other, '--json'], { env: ci });
  assert.equal(
    again.json.map((r: { changed: boolean }) => r.changed),
    [false, false],
  );
  const publish = await cli.run(['templates', 'publish', 'welcome', '--json'], { env: ci });
  assert.is(publish.code, 0, publish.stdout);
  assert.is(publish.json.alreadyPublished, true);
  noSecret(run);
});

test('a key without templates:write is refused on template writes (403); a bad file stops the push before any request', async () => {
  const reader = await createApiKey(world.tenantId, { scopes: ['templates:read', 'email:send'] });
  const path = write('refused/refused.html', '---\nsubject: s\n---\n<p>x</p>');
  const refused = await cli.run(['templates', 'push', path, '--json'], { env: { SVC_API_KEY: reader.key } });
  assert.is(refused.code, 1, refused.stdout);
  assert.is(refused.json.error.status, 403);
  const bad = write('refused/nosubject.html', '<p>x</p>');
  const stopped = await cli.run(['templates', 'push', path, bad, '--json'], { env: ci });
  assert.is(stopped.code, 2);
  assert.is(await Template.count({ where: { tenantId: world.tenantId, slug: 'refused' } }), 0, 'nothing was pushed');
});

test('templates check: clean file passes; each lint is reported with its code; exit 1 and --json findings', async () => {
  await addVerifiedDomain(ctx.deps.db.sequelize, ctx.deps.secrets, world.tenantId, 'acme.test');
  const good = write(
    'check/good.html',
    '---\nsubject: "Hi {{ name }}"\nfrom: hello@acme.test\ndata: {"name":"Ada"}\n---\n<p>Hello {{ name }}, <a href="https://acme.test">visit</a> <img src="https://acme.test/l.png" alt="logo"></p>\n',
  );
  const clean = await cli.run(['templates', 'check', good, '--json'], { env: ci });
  assert.is(clean.code, 0, clean.stdout + clean.stderr);
  assert.is(clean.json.ok, true);
  assert.equal(clean.json.files[0].findings, []);

  const big = 'x'.repeat(110 * 1024);
  const bad = write(
    'check/bad.html',
    `---\nsubject: "Hi {{ name }}"\nfrom: hello@unknown.test\nbroadcast: true\n---\n<p>{{ order.total }} <a href="http://acme.test">x</a> <img src="https://acme.test/a.png"></p><p>${big}</p>\n`,
  );
  const broken = write('check/broken.html', '---\nsubject: "Hi {{ name "\n---\n<p>{% if %}</p>\n');
  const run = await cli.run(['templates', 'check', bad, broken, '--json'], { env: ci });
  assert.is(run.code, 1, run.stdout + run.stderr);
  assert.is(run.json.ok, false);
  const codes = (index: number) => run.json.files[index].findings.map((f: { code: string }) => f.code).sort();
  assert.equal(codes(0), [
    'FROM_DOMAIN_UNKNOWN',
    'HTML_TOO_LARGE',
    'IMAGE_WITHOUT_ALT',
    'LINK_NOT_HTTPS',
    'UNSUBSCRIBE_MISSING',
    'VARIABLE_WITHOUT_SAMPLE',
    'VARIABLE_WITHOUT_SAMPLE',
  ]);
  assert.ok(codes(1).includes('LIQUID_INVALID'));
  const human = await cli.run(['templates', 'check', bad], { env: ci });
  assert.is(human.code, 1);
  assert.match(human.stdout, 'UNSUBSCRIBE_MISSING');
  assert.match(human.stdout, '{{ order.total }}');

  const textless = write('check/textless.html', '---\nsubject: s\n---\n<img src="https://acme.test/a.png" alt="">\n');
  const none = await cli.run(['templates', 'check', textless, '--json'], { env: ci });
  assert.equal(
    none.json.files[0].findings.map((f: { code: string }) => f.code),
    ['TEXT_PART_MISSING'],
  );

  const warnOnly = write('check/warn.html', '---\nsubject: s\n---\n<p>Hi <a href="http://acme.test">x</a></p>\n');
  assert.is((await cli.run(['templates', 'check', warnOnly], { env: ci })).code, 0, 'warnings alone pass');
  assert.is(
    (await cli.run(['templates', 'check', warnOnly, '--strict'], { env: ci })).code,
    1,
    '--strict fails on warnings',
  );
  const withData = await cli.run(
    [
      'templates',
      'check',
      write('check/data.html', '---\nsubject: "{{ who }}"\n---\n<p>x</p>'),
      '--data',
      '{"who":"Ada"}',
    ],
    { env: ci },
  );
  assert.is(withData.code, 0, withData.stdout);
});

test('templates diff: rendered subject, HTML as text and text against the published version, as unified diffs', async () => {
  const path = write(
    'diff/welcome.html',
    '---\nsubject: "Welcome aboard, {{ name }}"\ndata: {"name":"Ada"}\n---\n<p>Hello {{ name }}</p>\n<p>New paragraph</p>\n',
  );
  const run = await cli.run(['templates', 'diff', path, '--json'], { env: ci });
  assert.is(run.code, 0, run.stdout + run.stderr);
  const [result] = run.json;
  assert.is(result.slug, 'welcome');
  assert.is(result.published, true);
  assert.is(result.changed, true);
  assert.match(result.diff.subject, '-Welcome, Ada');
  assert.match(result.diff.subject, '+Welcome aboard, Ada');
  assert.match(result.diff.text, '+New paragraph');
  assert.match(result.diff.html, '@@ ');
  const human = await cli.run(['templates', 'diff', path, '--data', '{"name":"Grace"}'], { env: ci });
  assert.match(human.stdout, '+Welcome aboard, Grace');
  assert.match(human.stdout, '--- welcome (published) subject');
  const same = await cli.run(['templates', 'diff', join(files, 'many', 'welcome.html'), '--exit-code', '--json'], {
    env: ci,
  });
  assert.is(same.code, 0, same.stdout);
  assert.is(same.json[0].changed, false);
  assert.is((await cli.run(['templates', 'diff', path, '--exit-code'], { env: ci })).code, 1);
  const fresh = await cli.run(
    ['templates', 'diff', write('diff/brand-new.html', '---\nsubject: New\n---\n<p>x</p>'), '--json'],
    { env: ci },
  );
  assert.is(fresh.json[0].published, false);
  assert.match(fresh.json[0].diff.subject, '+New');
});

test('templates preview prints subject and text; --open writes the HTML and says where without an opener', async () => {
  const path = write(
    'preview/hello.html',
    '---\nsubject: "Hi {{ name }}"\ndata: {"name":"Ada"}\n---\n<h1>Hello {{ name }}</h1><p>Welcome</p>\n',
  );
  const run = await cli.run(['templates', 'preview', path], { env: ci });
  assert.is(run.code, 0, run.stderr);
  assert.match(run.stdout, 'Subject: Hi Ada');
  assert.match(run.stdout, 'HELLO ADA');
  const opened = await cli.run(['templates', 'preview', path, '--open', '--json'], {
    env: { ...ci, PATH: '/nonexistent' },
  });
  assert.is(opened.code, 0, opened.stderr);
  assert.is(opened.json.opened, false);
  assert.match(readFileSync(opened.json.htmlFile, 'utf8'), '<h1>Hello Ada</h1>');
});

test.run();
