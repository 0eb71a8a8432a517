// The hand-made commands on a tenant's resources against a real daemon, in-process (test/helpers/
// svc-inprocess.ts fails a command that calls an operation it does not declare): webhooks, domains, scheduled
// sends, batches and resends, projects, contacts and their tags, templates' chores, campaigns, billing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { addVerifiedDomain, createWorld } from './helpers/fixtures.ts';
import { listen } from './helpers/svc-cli.ts';
import { InProcessCli, operationMatchers } from './helpers/svc-inprocess.ts';
import { ContactRow } from '../daemon/modules/contacts/model.ts';

let ctx: TestContext;
let cli: InProcessCli;
let world: Awaited<ReturnType<typeof createWorld>>;
const files = mkdtempSync(join(tmpdir(), 'svc-cli-resources-'));

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

test('webhooks: toggle off and on, test, remove; domains remove', async () => {
  const added = await cli.run([
    'webhooks',
    'add',
    '--url',
    'http://127.0.0.1:9/hook',
    '--event',
    'email.sent',
    '--json',
  ]);
  const id = added.json.id as string;
  const off = await cli.run(['webhooks', 'toggle', id, '--json']);
  assert.is(off.json.enabled, false);
  const on = await cli.run(['webhooks', 'toggle', id, '--json']);
  assert.is(on.json.enabled, true);
  const tested = await cli.run(['webhooks', 'test', id, '--json']);
  assert.is(tested.code, 0, tested.stdout + tested.stderr);
  assert.is(tested.json.endpointId, id);
  assert.ok(tested.json.error || tested.json.statusCode === null, 'nothing listens on port 9');
  const removed = await cli.run(['webhooks', 'remove', id, '--json']);
  assert.is(removed.code, 0, removed.stdout);
  const list = await cli.run(['webhooks', 'list', '--json']);
  assert.equal(list.json.data, []);
  await cli.run(['domains', 'add', 'old.acme.test', '--json']);
  const gone = await cli.run(['domains', 'remove', 'old.acme.test', '--json']);
  assert.is(gone.code, 0, gone.stdout);
  const domains = await cli.run(['domains', 'list', '--json']);
  assert.equal(
    domains.json.domains.map((d: { name: string }) => d.name),
    ['acme.test'],
  );
});

test('scheduled sends: list and cancel; send-batch from a file; logs resend', async () => {
  const scheduled = await cli.run([
    'send',
    '--to',
    'later@example.com',
    '--from',
    'hello@acme.test',
    '--subject',
    'Later',
    '--text',
    'x',
    '--schedule',
    '+2d',
    '--json',
  ]);
  assert.is(scheduled.code, 0, scheduled.stdout);
  const pending = await cli.run(['scheduled', 'list', '--status', 'PENDING', '--json']);
  assert.equal(
    pending.json.data.map((s: { id: string }) => s.id),
    [scheduled.json.id],
  );
  const cancelled = await cli.run(['scheduled', 'cancel', scheduled.json.id, '--json']);
  assert.is(cancelled.json.status, 'CANCELLED');
  const again = await cli.run(['scheduled', 'cancel', scheduled.json.id, '--json']);
  assert.is(again.json.error.status, 409);

  const batchFile = join(files, 'batch.json');
  writeFileSync(
    batchFile,
    JSON.stringify({
      from: 'hello@acme.test',
      subject: 'Hi {{ name }}',
      htmlBody: '<p>Hi {{ name }}</p>',
      recipients: [
        { to: 'a@example.com', data: { name: 'A' } },
        { to: 'b@example.com', data: { name: 'B' } },
      ],
    }),
  );
  const batch = await cli.run(['send-batch', batchFile, '--json']);
  assert.is(batch.code, 0, batch.stdout + batch.stderr);
  assert.equal(
    batch.json.accepted.map((a: { to: string }) => a.to),
    ['a@example.com', 'b@example.com'],
  );
  const resent = await cli.run(['logs', 'resend', batch.json.accepted[0].id, '--json']);
  assert.is(resent.code, 0, resent.stdout);
  assert.is.not(resent.json.id, batch.json.accepted[0].id);
  const log = await cli.run(['logs', 'show', resent.json.id, '--json']);
  assert.equal(log.json.to, ['a@example.com']);
});

test('projects: create with an SMTP relay (password from stdin, never shown), update, verify-smtp, delete', async () => {
  const created = await cli.run(
    [
      'projects',
      'create',
      'Shop',
      '--smtp-host',
      '127.0.0.1',
      '--smtp-port',
      '9',
      '--smtp-user',
      'shop',
      '--smtp-pass-stdin',
      '--json',
    ],
    { input: 'relay-secret' },
  );
  assert.is(created.code, 0, created.stdout + created.stderr);
  assert.equal([created.json.smtp.host, created.json.smtp.port, created.json.smtp.passwordSet], ['127.0.0.1', 9, true]);
  assert.not.match(created.stdout, 'relay-secret');
  const id = created.json.id as string;
  const verify = await cli.run(['projects', 'verify-smtp', id, '--json']);
  assert.is(verify.code, 1, 'nothing listens on port 9');
  assert.is(verify.json.ok, false);
  const updated = await cli.run(['projects', 'update', id, '--name', 'Shop EU', '--no-smtp', '--json']);
  assert.equal([updated.json.name, updated.json.smtp], ['Shop EU', null]);
  const shown = await cli.run(['projects', 'show', id, '--json']);
  assert.is(shown.json.name, 'Shop EU');
  const list = await cli.run(['projects', 'list', '--json']);
  assert.is(list.json.length, 1);
  await cli.run(['projects', 'delete', id, '--json']);
  const after = await cli.run(['projects', 'show', id, '--json']);
  assert.is(after.json.error.status, 404);
});

test('contacts: upsert, list with filters, show, patch, tag and untag, bulk, erase; contact tags', async () => {
  const upsert = await cli.run([
    'contacts',
    'upsert',
    'ada@example.com',
    '--external-id',
    'user-1',
    '--first-name',
    'Ada',
    '--locale',
    'es',
    '--opt-in',
    '--tag',
    'vip',
    '--attributes',
    '{"plan":"pro"}',
    '--json',
  ]);
  assert.is(upsert.code, 0, upsert.stdout + upsert.stderr);
  assert.equal([upsert.json.firstName, upsert.json.tags, upsert.json.attributes], ['Ada', ['vip'], { plan: 'pro' }]);
  const bulkFile = join(files, 'contacts.json');
  writeFileSync(bulkFile, JSON.stringify([{ email: 'bob@example.com', optIn: false }, { email: 'not an address' }]));
  const bulk = await cli.run(['contacts', 'bulk', bulkFile, '--json']);
  assert.is(bulk.code, 1, 'a row failed');
  assert.equal([bulk.json.created, bulk.json.failed], [1, 1]);
  const vip = await cli.run(['contacts', 'list', '--tag', 'vip', '--opt-in', '--json']);
  assert.equal(
    vip.json.data.map((c: { email: string }) => c.email),
    ['ada@example.com'],
  );
  const optedOut = await cli.run(['contacts', 'list', '--no-opt-in', '--json']);
  assert.equal(
    optedOut.json.data.map((c: { email: string }) => c.email),
    ['bob@example.com'],
  );
  const patched = await cli.run(['contacts', 'patch', 'user-1', '--last-name', 'Lovelace', '--json']);
  assert.equal([patched.json.firstName, patched.json.lastName], ['Ada', 'Lovelace']);
  const tagged = await cli.run(['contacts', 'tag', 'user-1', 'beta', 'early', '--json']);
  assert.equal([...tagged.json.tags].sort(), ['beta', 'early', 'vip']);
  const untagged = await cli.run(['contacts', 'tag', 'user-1', 'beta', '--remove', '--json']);
  assert.equal([...untagged.json.tags].sort(), ['early', 'vip']);
  const shown = await cli.run(['contacts', 'show', 'user-1']);
  assert.match(shown.stdout, 'Lovelace');

  const created = await cli.run(['contacts', 'tags', 'create', 'newsletter', '--description', 'monthly', '--json']);
  assert.is(created.json.name, 'newsletter');
  const renamed = await cli.run(['contacts', 'tags', 'update', 'early', '--name', 'pioneer', '--json']);
  assert.is(renamed.json.name, 'pioneer');
  const tags = await cli.run(['contacts', 'tags', 'list', '--json']);
  const counts = Object.fromEntries(
    tags.json.data.map((t: { name: string; contacts: number }) => [t.name, t.contacts]),
  );
  assert.is(counts.pioneer, 1);
  await cli.run(['contacts', 'tags', 'delete', 'newsletter', '--json']);
  const afterDelete = await cli.run(['contacts', 'tags', 'list', '--json']);
  assert.not.ok(afterDelete.json.data.some((t: { name: string }) => t.name === 'newsletter'));

  const unconfirmed = await cli.run(['contacts', 'erase', 'user-1', '--json']);
  assert.is(unconfirmed.code, 2);
  const erased = await cli.run(['contacts', 'erase', 'user-1', '--yes', '--json']);
  assert.is(erased.json.erased, true);
  assert.is(await ContactRow.count({ where: { tenantId: world.tenantId, externalId: 'user-1' } }), 0);
});

test('templates: update, tags, duplicate, unpublish, delete a version and the template; campaigns create and coverage', async () => {
  const file = join(files, 'news.html');
  writeFileSync(file, '---\nslug: news\nname: News\nsubject: "News"\n---\n<p>News</p>\n');
  const pushed = await cli.run(['templates', 'push', file, '--publish', '--json']);
  assert.is(pushed.code, 0, pushed.stdout + pushed.stderr);
  const updated = await cli.run(['templates', 'update', 'news', '--name', 'Monthly news', '--json']);
  assert.is(updated.json.name, 'Monthly news');
  await cli.run(['templates', 'tags', 'create', 'marketing', '--json']);
  const tagged = await cli.run(['templates', 'tag', 'news', 'marketing', '--json']);
  assert.equal(
    tagged.json.map((t: { name: string }) => t.name),
    ['marketing'],
  );
  const copy = await cli.run(['templates', 'duplicate', 'news', '--json']);
  assert.is(copy.code, 0, copy.stdout);
  assert.is.not(copy.json.slug, 'news');

  const campaign = await cli.run(['campaigns', 'create', 'March', '--template', 'news', '--locale', 'es', '--json']);
  assert.is(campaign.code, 0, campaign.stdout + campaign.stderr);
  assert.equal([campaign.json.status, campaign.json.audience], ['DRAFT', { locale: 'es' }]);
  const coverage = await cli.run(['campaigns', 'coverage', campaign.json.id, '--json']);
  assert.is(coverage.code, 0, coverage.stdout);
  assert.ok(Array.isArray(coverage.json));

  const unpublished = await cli.run(['templates', 'unpublish', 'news', '--json']);
  assert.is(unpublished.json.published, false);
  const untagged = await cli.run(['templates', 'tag', 'news', 'marketing', '--remove', '--json']);
  assert.equal(untagged.json, []);
  await cli.run(['templates', 'tags', 'delete', 'marketing', '--json']);
  assert.equal((await cli.run(['templates', 'tags', 'list', '--json'])).json, []);
  const version = await cli.run(['templates', 'delete', copy.json.slug, '--version', '1', '--json']);
  assert.is(version.json.error.code, 'LAST_VERSION', 'the only version goes with its template');
  const removed = await cli.run(['templates', 'delete', copy.json.slug, '--yes', '--json']);
  assert.is(removed.code, 0, removed.stdout);
  const list = await cli.run(['templates', 'list', '--json']);
  assert.equal(
    list.json.data.map((t: { slug: string }) => t.slug),
    ['news'],
  );
});

test('billing without Stripe: every command says billing is not configured (exit 5), plans still list', async () => {
  const plans = await cli.run(['billing', 'plans', '--json']);
  assert.is(plans.code, 0, plans.stdout);
  assert.ok(plans.json.data.some((p: { planSlug: string }) => p.planSlug === 'free'));
  for (const args of [
    ['billing', 'subscription'],
    ['billing', 'checkout', 'pro', '--success-url', 'https://a.example/ok', '--cancel-url', 'https://a.example/'],
    ['billing', 'portal'],
  ]) {
    const run = await cli.run([...args, '--json']);
    assert.is(run.code, 5, `${args.join(' ')}: ${run.stdout}`);
    assert.is(run.json.error.code, 'BILLING_NOT_CONFIGURED');
  }
});

test.run();
