// GET /platform/deliverability and `svc platform deliverability` (docs/mta.md "Sender rules and
// deliverability"): every tenant's outcomes per provider summed over the period, and the tenants ranked
// worst first (complaint rate, bounce rate, volume). The rollup rows are written as the MTA loop's batch
// commits and the complaint path write them (deliverability_daily, one row per tenant, day and provider);
// the end-to-end counting is test/deliverability-stats.test.ts's.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createAdmin, createTenant } from './helpers/fixtures.ts';
import { assertErrorBody } from './helpers/error-body.ts';
import { listen } from './helpers/svc-cli.ts';
import { InProcessCli, operationMatchers } from './helpers/svc-inprocess.ts';
import type { PlatformDeliverabilityBody } from '../shared/schemas/deliverability.ts';

let ctx: TestContext;
let cli: InProcessCli;
let admin: { authorization: string };
let owner: { authorization: string };
const tenants: Record<string, string> = {};
const day = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);

test.before(async () => {
  ctx = await createTestContext();
  const document = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  cli = new InProcessCli(await listen(ctx), operationMatchers(document));
  const platformAdmin = await createAdmin(ctx.app, { platformAdmin: true });
  const member = await createAdmin(ctx.app);
  for (const name of ['Careful', 'Spammy', 'Bouncy', 'Quiet']) tenants[name] = await createTenant(member.id, name);
  admin = { authorization: `Bearer ${platformAdmin.token}` };
  owner = { authorization: `Bearer ${member.token}` };
  cli.writeProfile({ accessToken: platformAdmin.token, email: platformAdmin.email });
  // [tenant, days ago, provider, delivered, deferred, bounced, complained]
  const rows: Array<[string, number, string, number, number, number, number]> = [
    ['Careful', 0, 'google', 1000, 5, 2, 0],
    ['Careful', 1, 'yahoo', 500, 0, 1, 0],
    ['Spammy', 0, 'google', 400, 0, 4, 2], // 0.5 % complaints: worst
    ['Spammy', 40, 'google', 100, 0, 0, 50], // outside the default 30 days
    ['Bouncy', 2, 'microsoft', 100, 3, 20, 0], // no complaints, 16.7 % bounces
  ];
  for (const [name, ago, provider, delivered, deferred, bounced, complained] of rows)
    await ctx.db.sequelize.query(
      `INSERT INTO deliverability_daily (tenant_id, day, provider, delivered, deferred, bounced, complained)
       VALUES (:tenantId, CAST(:day AS date), :provider, :delivered, :deferred, :bounced, :complained)`,
      { replacements: { tenantId: tenants[name], day: day(ago), provider, delivered, deferred, bounced, complained } },
    );
});
test.after(async () => {
  cli?.cleanup();
  await ctx?.close();
});

const get = (query = '', headers = admin) =>
  ctx.app.inject({ method: 'GET', url: `/platform/deliverability${query}`, headers });

test('totals per provider over every tenant; tenants worst first; the period and provider filter', async () => {
  const res = await get();
  assert.is(res.statusCode, 200, res.body);
  const body = res.json() as PlatformDeliverabilityBody;
  assert.equal([body.from, body.to, body.provider], [day(29), day(0), null]);
  assert.equal(
    body.totals.map((t) => [t.provider, t.delivered, t.deferred, t.bounced, t.complained]),
    [
      ['google', 1400, 5, 6, 2],
      ['microsoft', 100, 3, 20, 0],
      ['yahoo', 500, 0, 1, 0],
    ],
  );
  assert.is(body.totals[0].complaintRate, 2 / 1400);
  assert.equal(
    body.tenants.map((t) => [t.tenantName, t.delivered, t.bounced, t.complained]),
    [
      ['Spammy', 400, 4, 2],
      ['Bouncy', 100, 20, 0],
      ['Careful', 1500, 3, 0],
    ],
    'complaint rate first, then bounce rate; a tenant without outcomes is not listed',
  );
  assert.equal([body.tenants[0].tenantId, body.tenants[0].complaintRate], [tenants.Spammy, 2 / 400]);
  assert.is(body.tenantCount, 3);

  const google = (await get('?provider=google&limit=1')).json() as PlatformDeliverabilityBody;
  assert.equal(
    google.totals.map((t) => t.provider),
    ['google'],
  );
  assert.equal([google.tenants.map((t) => t.tenantName), google.tenantCount], [['Spammy'], 2]);
  const older = (await get(`?from=${day(45)}&to=${day(35)}`)).json() as PlatformDeliverabilityBody;
  assert.equal(
    older.tenants.map((t) => [t.tenantName, t.complained]),
    [['Spammy', 50]],
  );
});

test('platform admins only; a bad period or limit is a 400 naming the field', async () => {
  assert.is((await get('', owner)).statusCode, 403);
  const backwards = await get(`?from=${day(1)}&to=${day(5)}`);
  assertErrorBody(backwards, 400, 'VALIDATION_FAILED');
  assert.is(backwards.json().details[0].field, 'from');
  const limit = await get('?limit=0');
  assertErrorBody(limit, 400, 'VALIDATION_FAILED');
  assert.match(JSON.stringify(limit.json().details), 'limit');
});

test('svc platform deliverability: the tables, and --json', async () => {
  const text = await cli.run(['platform', 'deliverability', '--days', '7']);
  assert.is(text.code, 0, text.stderr);
  assert.match(text.stdout, `Deliverability of every tenant, ${day(6)} to ${day(0)} (UTC)`);
  assert.match(text.stdout, /google\s+1400\s+5\s+6\s+2\s+0\.14 %\s+0\.43 %/);
  assert.match(text.stdout, `Tenants, worst first (3 of 3):`);
  assert.ok(
    text.stdout.indexOf('Spammy') < text.stdout.indexOf('Bouncy') &&
      text.stdout.indexOf('Bouncy') < text.stdout.indexOf('Careful'),
    text.stdout,
  );
  const json = await cli.run(['platform', 'deliverability', '--provider', 'microsoft', '--json']);
  assert.is(json.code, 0, json.stderr);
  assert.equal(
    (json.json as PlatformDeliverabilityBody).tenants.map((t) => t.tenantName),
    ['Bouncy'],
  );
});

test.run();
