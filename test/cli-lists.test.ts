// `svc contacts import` (a CSV streamed to POST /contacts/import) and `svc campaigns` (list, show,
// send with progress, cancel) as a pipeline runs them: no terminal, --json, against a real daemon.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createWorld } from './helpers/fixtures.ts';
import { runJobs } from './helpers/send-jobs.ts';
import { listen } from './helpers/svc-cli.ts';
import { InProcessCli, operationMatchers } from './helpers/svc-inprocess.ts';
import { waitFor } from './helpers/wait.ts';

let ctx: TestContext;
let cli: InProcessCli;
let world: Awaited<ReturnType<typeof createWorld>>;
let ci: Record<string, string>;
const files = mkdtempSync(join(tmpdir(), 'svc-cli-lists-'));

test.before(async () => {
  ctx = await createTestContext();
  const document = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  cli = new InProcessCli(await listen(ctx), operationMatchers(document));
  world = await createWorld(ctx.app);
  ci = { SVC_API_KEY: world.key.key, SVC_TENANT_ID: world.tenantId };
});
test.after(async () => {
  cli?.cleanup();
  await ctx?.close();
});

test('contacts import streams a CSV with --map; row errors by line, the run goes on', async () => {
  const file = join(files, 'people.csv');
  const rows = Array.from({ length: 1500 }, (_, i) => `reader${i}@example.com,Reader ${i},yes`);
  rows.splice(10, 0, 'broken-address,Nobody,yes');
  writeFileSync(file, ['Mail,Name,Subscribed', ...rows].join('\n') + '\n');
  const run = await cli.run(
    [
      'contacts',
      'import',
      file,
      '--map',
      'email=Mail',
      '--map',
      'firstName=Name',
      '--map',
      'optIn=Subscribed',
      '--json',
    ],
    { env: ci },
  );
  assert.is(run.code, 0, run.stdout + run.stderr);
  assert.equal([run.json.rows, run.json.created, run.json.failed], [1501, 1500, 1]);
  assert.is(run.json.errors[0].line, 12);
  const [count] = await ctx.db.sequelize.query<{ n: string }>(
    `SELECT count(*) AS n FROM contacts WHERE tenant_id = :t AND opt_in`,
    { replacements: { t: world.tenantId }, type: QueryTypes.SELECT },
  );
  assert.is(Number(count.n), 1500);

  const plain = await cli.run(['contacts', 'import', file, '--map', 'email=Mail'], { env: ci });
  assert.is(plain.code, 0, plain.stderr);
  assert.match(plain.stdout, '1501 rows: 0 created, 1500 updated, 1 failed.');
  assert.match(plain.stdout, 'line 12: Invalid contact');
  assert.match(plain.stderr, /MB sent/);

  const missing = await cli.run(['contacts', 'import', join(files, 'nope.csv'), '--json'], { env: ci });
  assert.is(missing.code, 2);
});

test('campaigns send --watch follows the send to SENT; list, show and cancel', async () => {
  const [template] = await ctx.db.sequelize.query<{ id: string }>(
    `INSERT INTO templates (tenant_id, name, slug, editor_mode, default_locale) VALUES (:t, 'News', 'news', 'html', 'en') RETURNING id`,
    { replacements: { t: world.tenantId }, type: QueryTypes.SELECT },
  );
  await ctx.db.sequelize.query(
    `INSERT INTO template_versions (tenant_id, template_id, version, locale, subject, html_body, published_at) VALUES (:t, :id, 1, 'en', 'Hi', '<p>Hi</p>', now())`,
    { replacements: { t: world.tenantId, id: template.id } },
  );
  const create = (name: string) =>
    ctx.app.inject({
      method: 'POST',
      url: '/campaigns',
      headers: world.asKey,
      payload: { name, templateId: template.id, audience: {} },
    });
  const campaign = (await create('Newsletter')).json();
  // Beyond the free plan's 110 a month.
  await ctx.db.sequelize.query(`UPDATE tenants SET plan = 'business' WHERE id = :t`, {
    replacements: { t: world.tenantId },
  });

  const watching = cli.run(['campaigns', 'send', campaign.id, '--from', 'news@acme.test', '--watch'], {
    env: ci,
  });
  // No worker threads in this process: run the expansion job once the CLI has started the send.
  await waitFor('the CLI to start the send', async () => (await runJobs(ctx, 'campaign')).length > 0, {
    timeoutMs: 20_000,
    intervalMs: 100,
  });
  const run = await watching;
  assert.is(run.code, 0, run.stdout + run.stderr);
  assert.match(run.stdout, /SENT · 1,500 accepted · 0 rejected · 0 remaining of 1,500/);
  assert.match(run.stdout, /status\s+SENT/);

  const shown = await cli.run(['campaigns', 'show', campaign.id, '--json'], { env: ci });
  assert.equal(
    [shown.json.status, shown.json.accepted, shown.json.total, shown.json.remaining],
    ['SENT', 1500, 1500, 0],
  );
  const listed = await cli.run(['campaigns', 'list', '--status', 'SENT', '--json'], { env: ci });
  assert.equal(
    listed.json.data.map((c: { id: string }) => c.id),
    [campaign.id],
  );

  const other = (await create('Later')).json();
  const cancelled = await cli.run(['campaigns', 'cancel', other.id, '--json'], { env: ci });
  assert.is(cancelled.code, 0, cancelled.stderr);
  assert.is(cancelled.json.status, 'CANCELLED');
  const again = await cli.run(['campaigns', 'cancel', other.id, '--json'], { env: ci });
  assert.is(again.code, 1);
  assert.is(again.json.error.code, 'CAMPAIGN_NOT_CANCELLABLE');
  await ctx.db.sequelize.query(`DELETE FROM jobs WHERE queue = 'send'`);
});

test.run();
