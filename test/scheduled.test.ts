// Scheduled emails: create (timezone rules), list by status, cancel, and the run at sendAt.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createWorld } from './helpers/fixtures.ts';
import { runJobs } from './helpers/send-jobs.ts';
import { resolveSendAt } from '../daemon/modules/scheduled/service.ts';

let ctx: TestContext;
let world: Awaited<ReturnType<typeof createWorld>>;
const base = { from: 'app@acme.test', to: 'ana@example.test', subject: 'Later', textBody: 'hi' };

test.before(async () => {
  ctx = await createTestContext();
  world = await createWorld(ctx.app);
});
test.after(async () => {
  await ctx?.close();
});

test('sendAt without offset is read in the timezone (Europe/Madrid by default), across DST', () => {
  assert.is(resolveSendAt('2030-01-15T09:00:00', 'Europe/Madrid').toISOString(), '2030-01-15T08:00:00.000Z');
  assert.is(resolveSendAt('2030-07-15T09:00', 'Europe/Madrid').toISOString(), '2030-07-15T07:00:00.000Z');
  assert.is(resolveSendAt('2030-07-15T09:00:00', 'America/New_York').toISOString(), '2030-07-15T13:00:00.000Z');
  assert.is(resolveSendAt('2030-07-15T09:00:00Z', 'Asia/Tokyo').toISOString(), '2030-07-15T09:00:00.000Z');
  assert.is(resolveSendAt('2030-07-15T09:00:00+02:00', 'Asia/Tokyo').toISOString(), '2030-07-15T07:00:00.000Z');
});

test('create, list by status, cancel; cancel twice → 409; the job is removed', async () => {
  const created = await ctx.app.inject({
    method: 'POST',
    url: '/scheduled-emails',
    headers: world.asKey,
    payload: { ...base, sendAt: '2030-01-15T09:00:00' },
  });
  assert.is(created.statusCode, 201, created.body);
  const row = created.json();
  assert.is(row.status, 'PENDING');
  assert.is(row.timezone, 'Europe/Madrid');
  assert.is(row.sendAt, '2030-01-15T08:00:00.000Z');
  assert.is(row.payload.to, 'ana@example.test');
  const [job] = await ctx.db.sequelize.query<{ run_at: Date }>(
    `SELECT run_at FROM jobs WHERE queue = 'scheduled' AND key = :k`,
    { replacements: { k: `scheduled:${row.id}` }, type: QueryTypes.SELECT },
  );
  assert.is(new Date(job.run_at).toISOString(), '2030-01-15T08:00:00.000Z');
  const list = (
    await ctx.app.inject({ method: 'GET', url: '/scheduled-emails?status=PENDING', headers: world.asKey })
  ).json();
  assert.is(list.meta.total, 1);
  const cancelled = await ctx.app.inject({
    method: 'DELETE',
    url: `/scheduled-emails/${row.id}`,
    headers: world.asKey,
  });
  assert.is(cancelled.statusCode, 200);
  assert.is(cancelled.json().status, 'CANCELLED');
  const [{ count }] = await ctx.db.sequelize.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM jobs WHERE queue = 'scheduled'`,
    { type: QueryTypes.SELECT },
  );
  assert.is(count, 0);
  const again = await ctx.app.inject({ method: 'DELETE', url: `/scheduled-emails/${row.id}`, headers: world.asKey });
  assert.is(again.statusCode, 409);
  const other = await createWorld(ctx.app);
  assert.is(
    (await ctx.app.inject({ method: 'DELETE', url: `/scheduled-emails/${row.id}`, headers: other.asKey })).statusCode,
    404,
  );
  assert.is(
    (await ctx.app.inject({ method: 'GET', url: '/scheduled-emails?status=CANCELLED', headers: world.asKey })).json()
      .meta.total,
    1,
  );
});

test('invalid date, invalid zone, past date, bad send body → 400', async () => {
  for (const extra of [
    { sendAt: 'tomorrow' },
    { sendAt: '2030-02-30T10:00:00' },
    { sendAt: '2030-01-15T09:00:00', timezone: 'Mars/Olympus' },
    { sendAt: '2001-01-01T00:00:00Z' },
  ]) {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/scheduled-emails',
      headers: world.asKey,
      payload: { ...base, ...extra },
    });
    assert.is(res.statusCode, 400, JSON.stringify(extra) + res.body);
    assert.is(res.json().code, 'VALIDATION_FAILED');
  }
  const bad = await ctx.app.inject({
    method: 'POST',
    url: '/scheduled-emails',
    headers: world.asKey,
    payload: { ...base, to: 'x\r\nBcc: y@z.test', sendAt: '2030-01-15T09:00:00' },
  });
  assert.is(bad.statusCode, 400);
});

test('at sendAt the job sends through the pipeline: PENDING → SENT; over quota → FAILED', async () => {
  const created = (
    await ctx.app.inject({
      method: 'POST',
      url: '/scheduled-emails',
      headers: world.asKey,
      payload: { ...base, sendAt: '2030-01-15T09:00:00' },
    })
  ).json();
  assert.equal(await runJobs(ctx, 'scheduled'), ['done']);
  const sent = (
    await ctx.app.inject({ method: 'GET', url: '/scheduled-emails?status=SENT', headers: world.asKey })
  ).json();
  assert.is(sent.data[0].id, created.id);
  assert.ok(sent.data[0].emailId);
  assert.equal(await runJobs(ctx, 'send'), ['done']);
  const log = (
    await ctx.app.inject({ method: 'GET', url: `/emails/logs/${sent.data[0].emailId}`, headers: world.asKey })
  ).json();
  assert.is(log.status, 'SENT');

  await ctx.db.sequelize.query(`UPDATE tenants SET monthly_limit = 0 WHERE id = :t`, {
    replacements: { t: world.tenantId },
  });
  const late = (
    await ctx.app.inject({
      method: 'POST',
      url: '/scheduled-emails',
      headers: world.asKey,
      payload: { ...base, sendAt: '2030-01-15T09:00:00' },
    })
  ).json();
  assert.equal(await runJobs(ctx, 'scheduled'), ['done']);
  const failed = (
    await ctx.app.inject({ method: 'GET', url: '/scheduled-emails?status=FAILED', headers: world.asKey })
  ).json();
  assert.is(failed.data[0].id, late.id);
  assert.match(failed.data[0].error, /quota/);
});

test.run();
