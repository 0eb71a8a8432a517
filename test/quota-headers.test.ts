// X-Quota-* on every answer of a tenant-scoped route (spec §8), from the API node's cached tenant
// state, and that cache's invalidation: changes made behind the API's back (plain SQL) are caught by
// the accept statement's re-check, and a change made through one node reaches another by NOTIFY.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createWorld } from './helpers/fixtures.ts';
import { initModels } from '../daemon/modules/models.ts';
import { waitFor } from './helpers/wait.ts';

let ctx: TestContext;

test.before(async () => {
  ctx = await createTestContext();
});

test.after(async () => {
  await ctx?.close();
});

const message = (n: number) => ({
  from: 'app@acme.test',
  to: `reader${n}@example.test`,
  subject: `Hello ${n}`,
  textBody: 'Hi',
});

async function tenantWithLimit(limit: number) {
  const world = await createWorld(ctx.app);
  await ctx.db.sequelize.query('UPDATE tenants SET monthly_limit = :limit WHERE id = :id', {
    replacements: { limit, id: world.tenantId },
  });
  return world;
}

async function logCount(tenantId: string): Promise<number> {
  const [row] = await ctx.db.sequelize.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM email_logs WHERE tenant_id = :tenantId',
    { replacements: { tenantId }, type: QueryTypes.SELECT },
  );
  return row.n;
}

test('non-send tenant routes answer X-Quota-Limit/Used/Percentage, for a key and for a session; routes outside a tenant do not', async () => {
  const world = await tenantWithLimit(10);
  for (const n of [1, 2]) {
    const sent = await ctx.app.inject({
      method: 'POST',
      url: '/emails/send',
      headers: world.asKey,
      payload: message(n),
    });
    assert.is(sent.statusCode, 202, sent.body);
    assert.is(sent.headers['x-quota-used'], String(n));
  }
  const reads = [
    { url: '/emails/logs', headers: world.asKey },
    { url: '/suppressions', headers: world.asKey },
    { url: '/contacts', headers: world.asKey },
    { url: '/domains', headers: world.asOwner },
    { url: '/templates', headers: world.asOwner },
  ];
  for (const read of reads) {
    const res = await ctx.app.inject({ method: 'GET', ...read });
    assert.is(res.statusCode, 200, `${read.url}: ${res.body}`);
    assert.is(res.headers['x-quota-limit'], '10', read.url);
    assert.is(res.headers['x-quota-used'], '2', read.url);
    assert.is(res.headers['x-quota-percentage'], '20', read.url);
    assert.is(res.headers['x-quota-warning'], undefined, read.url);
  }
  // A refusal inside the tenant carries them too.
  const missing = await ctx.app.inject({
    method: 'GET',
    url: '/emails/logs/00000000-0000-4000-8000-000000000000',
    headers: world.asKey,
  });
  assert.is(missing.statusCode, 404);
  assert.is(missing.headers['x-quota-used'], '2');

  const me = await ctx.app.inject({
    method: 'GET',
    url: '/auth/me',
    headers: { authorization: world.asOwner.authorization },
  });
  assert.is(me.statusCode, 200, me.body);
  assert.is(me.headers['x-quota-limit'], undefined);
  const anonymous = await ctx.app.inject({ method: 'GET', url: '/emails/logs' });
  assert.is(anonymous.statusCode, 401);
  assert.is(anonymous.headers['x-quota-limit'], undefined);

  // 8 of 10 used: the warning appears on every answer.
  for (const n of [3, 4, 5, 6, 7, 8])
    assert.is(
      (await ctx.app.inject({ method: 'POST', url: '/emails/send', headers: world.asKey, payload: message(n) }))
        .statusCode,
      202,
    );
  const warned = await ctx.app.inject({ method: 'GET', url: '/suppressions', headers: world.asKey });
  assert.equal(
    [warned.headers['x-quota-used'], warned.headers['x-quota-percentage'], warned.headers['x-quota-warning']],
    ['8', '80', 'true'],
  );
});

test('changes made in plain SQL behind the cache: the next send sees the new limit, a pause, and its lifting', async () => {
  const world = await tenantWithLimit(10);
  assert.is(
    (await ctx.app.inject({ method: 'POST', url: '/emails/send', headers: world.asKey, payload: message(1) }))
      .statusCode,
    202,
  );
  // The cache now holds limit 10; the statement's re-check notices the change and the send reads again.
  await ctx.db.sequelize.query('UPDATE tenants SET monthly_limit = 100 WHERE id = :id', {
    replacements: { id: world.tenantId },
  });
  const raised = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: world.asKey,
    payload: message(2),
  });
  assert.is(raised.statusCode, 202, raised.body);
  assert.equal([raised.headers['x-quota-limit'], raised.headers['x-quota-used']], ['100', '2']);

  await ctx.db.sequelize.query(
    `UPDATE tenants SET sending_paused_at = now(), sending_paused_reason = 'bounce rate' WHERE id = :id`,
    { replacements: { id: world.tenantId } },
  );
  const paused = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: world.asKey,
    payload: message(3),
  });
  assert.is(paused.statusCode, 403, paused.body);
  assert.is(paused.json().code, 'SENDING_PAUSED');
  assert.is(await logCount(world.tenantId), 2);

  // The refusal cached the pause; a refusal from the cache is confirmed on a fresh read.
  await ctx.db.sequelize.query(
    'UPDATE tenants SET sending_paused_at = NULL, sending_paused_reason = NULL WHERE id = :id',
    { replacements: { id: world.tenantId } },
  );
  const resumed = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: world.asKey,
    payload: message(4),
  });
  assert.is(resumed.statusCode, 202, resumed.body);
  assert.is(await logCount(world.tenantId), 3);

  // A recipient suppressed behind the cache's back is still dropped (the statement checks the list).
  await ctx.db.sequelize.query(
    `INSERT INTO suppressions (tenant_id, email, reason) VALUES (:id, 'reader5@example.test', 'manual')`,
    { replacements: { id: world.tenantId } },
  );
  const suppressed = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: world.asKey,
    payload: message(5),
  });
  assert.is(suppressed.statusCode, 422, suppressed.body);
  assert.is(suppressed.json().code, 'RECIPIENT_SUPPRESSED');
  assert.is(await logCount(world.tenantId), 3);
});

test('a key revoked through one API node stops working on another (NOTIFY), and sends with it are refused at once', async () => {
  const second = await createTestContext({
    database: { url: ctx.databaseUrl, dataDir: ctx.dataDir, drop: async () => {} },
  });
  try {
    const world = await createWorld(ctx.app);
    // The second node caches the key.
    assert.is((await second.app.inject({ method: 'GET', url: '/emails/logs', headers: world.asKey })).statusCode, 200);
    const revoked = await ctx.app.inject({
      method: 'DELETE',
      url: `/tenants/${world.tenantId}/api-keys/${world.key.id}`,
      headers: world.asOwner,
    });
    assert.ok(revoked.statusCode < 300, revoked.body);
    // A send on the second node is refused whether or not the notification has arrived yet: the
    // statement checks the key.
    const send = await second.app.inject({
      method: 'POST',
      url: '/emails/send',
      headers: world.asKey,
      payload: message(1),
    });
    assert.is(send.statusCode, 401, send.body);
    assert.is(await logCount(world.tenantId), 0);
    // Reads have no such check: they stop once the notification dropped the cached key (the
    // embedded PGlite delivers no notification to other sessions: there the 10 s TTL does it).
    if (ctx.db.embedded) return;
    await waitFor(
      'the other node to refuse the revoked key',
      async () =>
        (await second.app.inject({ method: 'GET', url: '/emails/logs', headers: world.asKey })).statusCode === 401,
      { timeoutMs: 5_000 },
    );
  } finally {
    await second.close();
    // The Sequelize models are bound by the last buildApp (module state, issue 16): give them back.
    initModels(ctx.db.sequelize);
  }
});

test.run();
