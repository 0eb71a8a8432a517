// Projects (CRUD, sealed SMTP password, verify-smtp handshake, sends through the project's relay)
// and suppressions (CRUD, filters, isolation, scopes).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { addVerifiedDomain, createApiKey, createWorld } from './helpers/fixtures.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp-sink.ts';
import { runJobs } from './helpers/send-jobs.ts';

let ctx: TestContext;
let sink: SmtpSink;
let world: Awaited<ReturnType<typeof createWorld>>;

test.before(async () => {
  sink = await startSmtpSink();
  ctx = await createTestContext();
  world = await createWorld(ctx.app);
});
test.after(async () => {
  await ctx?.close();
  await sink?.close();
});

test('project CRUD; the SMTP password is sealed at rest and never shown', async () => {
  const created = await ctx.app.inject({
    method: 'POST',
    url: '/projects',
    headers: world.asKey,
    payload: {
      name: 'Shop',
      smtp: { host: '127.0.0.1', port: sink.port, secure: false, user: 'u', pass: 'hunter2-secret' },
    },
  });
  assert.is(created.statusCode, 201, created.body);
  const project = created.json();
  assert.is(project.smtp.passwordSet, true);
  assert.not.match(created.body, /hunter2/);
  const [row] = await ctx.db.sequelize.query<{ smtp_pass_sealed: string }>(
    `SELECT smtp_pass_sealed FROM projects WHERE id = :id`,
    { replacements: { id: project.id }, type: QueryTypes.SELECT },
  );
  assert.match(row.smtp_pass_sealed, /^v1\./);
  assert.not.match(row.smtp_pass_sealed, /hunter2/);
  const renamed = await ctx.app.inject({
    method: 'PATCH',
    url: `/projects/${project.id}`,
    headers: world.asKey,
    payload: { name: 'Shop EU' },
  });
  assert.is(renamed.json().name, 'Shop EU');
  assert.is((await ctx.app.inject({ method: 'GET', url: '/projects', headers: world.asKey })).json().length, 1);
  const other = await createWorld(ctx.app);
  assert.is(
    (await ctx.app.inject({ method: 'GET', url: `/projects/${project.id}`, headers: other.asKey })).statusCode,
    404,
  );
  const noScope = await createApiKey(world.tenantId, { scopes: ['projects:read'] });
  assert.is(
    (
      await ctx.app.inject({
        method: 'POST',
        url: '/projects',
        headers: { authorization: `Bearer ${noScope.key}` },
        payload: { name: 'x' },
      })
    ).statusCode,
    403,
  );
  assert.is(
    (await ctx.app.inject({ method: 'POST', url: '/projects', headers: world.asKey, payload: { name: '' } }))
      .statusCode,
    400,
  );
});

test('verify-smtp does a real handshake: ok against a live server, an error against a closed port', async () => {
  const project = (await ctx.app.inject({ method: 'GET', url: '/projects', headers: world.asKey })).json()[0];
  const ok = await ctx.app.inject({ method: 'POST', url: `/projects/${project.id}/verify-smtp`, headers: world.asKey });
  assert.equal(ok.json(), { ok: true });
  const dead = (
    await ctx.app.inject({
      method: 'POST',
      url: '/projects',
      headers: world.asKey,
      payload: { name: 'Dead', smtp: { host: '127.0.0.1', port: 1, secure: false } },
    })
  ).json();
  const failed = (
    await ctx.app.inject({ method: 'POST', url: `/projects/${dead.id}/verify-smtp`, headers: world.asKey })
  ).json();
  assert.is(failed.ok, false);
  assert.match(failed.error, /ECONNREFUSED|connect/i);
  assert.is(
    (await ctx.app.inject({ method: 'DELETE', url: `/projects/${dead.id}`, headers: world.asKey })).statusCode,
    200,
  );
});

test('a send naming a project goes through the project relay (not captured)', async () => {
  const project = (await ctx.app.inject({ method: 'GET', url: '/projects', headers: world.asKey })).json()[0];
  await addVerifiedDomain(ctx.db.sequelize, ctx.deps.secrets, world.tenantId, 'shop.test');
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: world.asKey,
    payload: {
      from: 'shop@shop.test',
      to: 'buyer@example.test',
      subject: 'Order',
      textBody: 'thanks',
      projectId: project.id,
    },
  });
  assert.is(res.statusCode, 202, res.body);
  assert.equal(await runJobs(ctx, 'send'), ['done']);
  const received = await sink.waitFor((m) => m.parsed.messageId === res.json().messageId);
  assert.equal(received.rcptTo, ['buyer@example.test']);
  assert.ok(received.parsed.headers.has('dkim-signature'), 'relayed through the project, signed with the domain key');
  const unknown = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: world.asKey,
    payload: {
      from: 'shop@shop.test',
      to: 'b@example.test',
      subject: 'x',
      textBody: 'y',
      projectId: '00000000-0000-4000-8000-000000000000',
    },
  });
  assert.is(unknown.statusCode, 422);
});

test('suppressions: create, duplicate 409, filters, delete by email and id, isolation', async () => {
  const a = await ctx.app.inject({
    method: 'POST',
    url: '/suppressions',
    headers: world.asKey,
    payload: { email: 'Spam@Example.test', reason: 'complaint' },
  });
  assert.is(a.statusCode, 201);
  assert.is(a.json().email, 'spam@example.test');
  assert.is(
    (
      await ctx.app.inject({
        method: 'POST',
        url: '/suppressions',
        headers: world.asKey,
        payload: { email: 'spam@example.test', reason: 'manual' },
      })
    ).statusCode,
    409,
  );
  assert.is(
    (
      await ctx.app.inject({
        method: 'POST',
        url: '/suppressions',
        headers: world.asKey,
        payload: { email: 'x@example.test', reason: 'other' },
      })
    ).statusCode,
    400,
  );
  await ctx.app.inject({
    method: 'POST',
    url: '/suppressions',
    headers: world.asKey,
    payload: { email: 'manual@example.test', reason: 'manual' },
  });
  const complaints = (
    await ctx.app.inject({ method: 'GET', url: '/suppressions?reason=complaint', headers: world.asKey })
  ).json();
  assert.equal(
    complaints.data.map((s: { email: string }) => s.email),
    ['spam@example.test'],
  );
  const other = await createWorld(ctx.app);
  assert.is((await ctx.app.inject({ method: 'GET', url: '/suppressions', headers: other.asKey })).json().meta.total, 0);
  assert.is(
    (await ctx.app.inject({ method: 'DELETE', url: `/suppressions/${a.json().id}`, headers: other.asKey })).statusCode,
    404,
  );
  assert.is(
    (await ctx.app.inject({ method: 'DELETE', url: `/suppressions/${a.json().id}`, headers: world.asKey })).statusCode,
    200,
  );
  assert.is(
    (await ctx.app.inject({ method: 'DELETE', url: '/suppressions?email=manual@example.test', headers: world.asKey }))
      .statusCode,
    200,
  );
  assert.is(
    (await ctx.app.inject({ method: 'DELETE', url: '/suppressions?email=manual@example.test', headers: world.asKey }))
      .statusCode,
    404,
  );
  const reader = await createApiKey(world.tenantId, { scopes: ['suppressions:read'] });
  assert.is(
    (
      await ctx.app.inject({
        method: 'POST',
        url: '/suppressions',
        headers: { authorization: `Bearer ${reader.key}` },
        payload: { email: 'q@example.test', reason: 'manual' },
      })
    ).statusCode,
    403,
  );
});

test.run();
