// `svc stats deliverability` in-process against a real daemon (test/helpers/svc-inprocess.ts fails a
// command that calls an operation it does not declare), its Ink chart in a test renderer, and the
// rollup's provider resolution for outcomes without MX hosts: the provider the MTA last saw for the
// domain, else the well-known consumer domains, else default.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import React from 'react';
import { render } from 'ink-testing-library';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createWorld } from './helpers/fixtures.ts';
import { listen } from './helpers/svc-cli.ts';
import { InProcessCli, operationMatchers } from './helpers/svc-inprocess.ts';
import { Deliverability } from '../cli/ui/Deliverability.tsx';
import { sparkline } from '../cli/services/deliverability-report.ts';
import { DeliverabilityTally } from '../daemon/modules/deliverability/tally.ts';
import { flushDeliverability } from '../daemon/modules/deliverability/sql.ts';
import type { DeliverabilityBody } from '../shared/schemas/deliverability.ts';
import { waitFor } from './helpers/wait.ts';

let ctx: TestContext;
let cli: InProcessCli;
let world: Awaited<ReturnType<typeof createWorld>>;
const DAY_MS = 86_400_000;
const today = new Date().toISOString().slice(0, 10);
const yesterday = new Date(Date.now() - DAY_MS).toISOString().slice(0, 10);

test.before(async () => {
  ctx = await createTestContext();
  const document = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  cli = new InProcessCli(await listen(ctx), operationMatchers(document));
  world = await createWorld(ctx.app);
  cli.writeProfile({ accessToken: world.owner.token, tenantId: world.tenantId, tenantName: 'Acme' });
});
test.after(async () => {
  cli?.cleanup();
  await ctx?.close();
});

test('outcomes without MX hosts: the domain the MTA saw, else a well-known consumer domain, else default', async () => {
  await ctx.db.sequelize.transaction(async (transaction) => {
    const seen = new DeliverabilityTally();
    seen.sawProvider('corp.test', 'microsoft');
    seen.add(world.tenantId, 'delivered', ['a@corp.test', 'b@corp.test'], 'microsoft');
    await flushDeliverability(await ctx.db.sql.inTransaction(transaction), seen);
  });
  await ctx.db.sequelize.transaction(async (transaction) => {
    const later = new DeliverabilityTally();
    later.add(world.tenantId, 'complained', ['a@corp.test'], null);
    later.add(world.tenantId, 'bounced', ['x@gmail.com', 'y@GoogleMail.com'], null);
    later.add(world.tenantId, 'deferred', ['z@unknown.test'], null);
    later.add(world.tenantId, 'delivered', ['w@yahoo.com'], null);
    await flushDeliverability(await ctx.db.sql.inTransaction(transaction), later);
  });
  const rows = await ctx.db.sequelize.query(
    `SELECT provider, delivered, deferred, bounced, complained FROM deliverability_daily
      WHERE tenant_id = :tenantId ORDER BY provider`,
    { replacements: { tenantId: world.tenantId }, type: QueryTypes.SELECT },
  );
  assert.equal(rows, [
    { provider: 'default', delivered: 0, deferred: 1, bounced: 0, complained: 0 },
    { provider: 'google', delivered: 0, deferred: 0, bounced: 2, complained: 0 },
    { provider: 'microsoft', delivered: 2, deferred: 0, bounced: 0, complained: 1 },
    { provider: 'yahoo', delivered: 1, deferred: 0, bounced: 0, complained: 0 },
  ]);
});

test('svc stats deliverability --json: the API body; --provider and --days narrow it', async () => {
  await ctx.db.sequelize.query(
    `INSERT INTO deliverability_daily (tenant_id, day, provider, delivered, deferred, bounced, complained)
     VALUES (:tenantId, CAST(:yesterday AS date), 'google', 1000, 4, 10, 2)`,
    { replacements: { tenantId: world.tenantId, yesterday } },
  );
  const run = await cli.run(['stats', 'deliverability', '--json']);
  assert.is(run.code, 0, run.stdout + run.stderr);
  const body = run.json as DeliverabilityBody;
  assert.is(body.to, today);
  assert.is(body.from, new Date(Date.now() - 29 * DAY_MS).toISOString().slice(0, 10));
  assert.equal(
    body.totals.map((t) => [t.provider, t.delivered, t.bounced, t.complained]),
    [
      ['default', 0, 0, 0],
      ['google', 1000, 12, 2],
      ['microsoft', 2, 0, 1],
      ['yahoo', 1, 0, 0],
    ],
  );
  const google = await cli.run(['stats', 'deliverability', '--provider', 'google', '--days', '1', '--json']);
  assert.equal(google.json.days, [
    { day: today, provider: 'google', delivered: 0, deferred: 0, bounced: 2, complained: 0 },
  ]);
  assert.is(google.json.from, today);
});

test('svc stats deliverability without a terminal prints the report: totals, rates and sparklines per provider', async () => {
  const run = await cli.run(['stats', 'deliverability', '--days', '2', '--provider', 'google']);
  assert.is(run.code, 0, run.stdout + run.stderr);
  assert.match(run.stdout, `Deliverability ${yesterday} → ${today} (UTC days), google`);
  assert.match(
    run.stdout,
    'google     delivered 1000  deferred 4  bounced 12  complained 2  complaint rate 0.20 %  bounce rate 1.19 %',
  );
  assert.match(run.stdout, '\ndelivered  |█ |');
  assert.match(run.stdout, '\n problems  |▁▁|');
  const bad = await cli.run(['stats', 'deliverability', '--days', '0', '--json']);
  assert.is(bad.code, 2, bad.stdout);
});

test('sparkline: blank for zero, scaled to the maximum given', () => {
  assert.is(sparkline([0, 1, 2, 4, 8]), ' ▁▂▄█');
  assert.is(sparkline([1, 1], 8), '▁▁');
  assert.is(sparkline([0, 0]), '  ');
});

test('the chart screen: a block per provider with its sparklines and coloured complaint rate; q quits', async () => {
  const body: DeliverabilityBody = {
    from: yesterday,
    to: today,
    provider: null,
    days: [
      { day: yesterday, provider: 'google', delivered: 100, deferred: 1, bounced: 0, complained: 0 },
      { day: today, provider: 'google', delivered: 50, deferred: 0, bounced: 0, complained: 1 },
    ],
    totals: [
      {
        provider: 'google',
        delivered: 150,
        deferred: 1,
        bounced: 0,
        complained: 1,
        complaintRate: 1 / 150,
        bounceRate: 0,
      },
    ],
  };
  let exited = false;
  const { lastFrame, stdin, unmount } = render(
    <Deliverability body={body} columns={80} onExit={() => (exited = true)} />,
  );
  const frame = lastFrame()!;
  assert.match(frame, `Deliverability ${yesterday} → ${today}`);
  assert.match(frame, 'google delivered 150 · deferred 1 · bounced 0 · complained 1 · complaint rate 0.67 %');
  assert.match(frame, ' delivered █▄');
  assert.match(frame, '  problems ▁▁');
  stdin.write('q');
  await waitFor('q to leave the screen', () => exited);
  unmount();
});

test.run();
