// GET /emails/logs/stream (the feed of `svc logs tail`): auth, tenant filter, backlog, changes,
// resume with Last-Event-ID, and a daemon that still shuts down with streams open.
import { test } from 'uvu';
import { QueryTypes } from 'sequelize';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createApiKey, createWorld } from './helpers/fixtures.ts';
import { listen } from './helpers/svc-cli.ts';
import { readSseFrames } from '../cli/services/log-feed.ts';
import { EmailLog } from '../daemon/modules/emails/model.ts';

let ctx: TestContext;
let baseUrl: string;
let a: Awaited<ReturnType<typeof createWorld>>;
let b: Awaited<ReturnType<typeof createWorld>>;

test.before(async () => {
  ctx = await createTestContext();
  baseUrl = await listen(ctx);
  a = await createWorld(ctx.app);
  b = await createWorld(ctx.app);
});
test.after(async () => {
  await ctx?.close();
});

async function sendAs(headers: Record<string, string>, subject: string): Promise<string> {
  const response = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers,
    payload: { from: 'hello@acme.test', to: 'someone@example.com', subject, textBody: 'x' },
  });
  assert.is(response.statusCode, 202, response.body);
  return response.json().id;
}

interface Frame {
  event: string;
  data: string;
  id?: string;
}

/** Opens the stream and hands out frames one by one, with a deadline per frame. */
async function openStream(headers: Record<string, string>, query = '') {
  const controller = new AbortController();
  const response = await fetch(`${baseUrl}/emails/logs/stream${query}`, { headers, signal: controller.signal });
  assert.is(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', 'text/event-stream');
  const frames = readSseFrames(response.body!, controller.signal);
  return {
    async next(timeoutMs = 10_000): Promise<Frame & { json: any }> {
      const timer = setTimeout(() => controller.abort(), timeoutMs);
      try {
        const { value, done } = await frames.next();
        if (done) throw new Error('stream ended');
        return { ...value, json: JSON.parse(value.data) };
      } finally {
        clearTimeout(timer);
      }
    },
    close: () => controller.abort(),
  };
}

test('the stream needs credentials and the email:read scope', async () => {
  const anonymous = await ctx.app.inject({ method: 'GET', url: '/emails/logs/stream' });
  assert.is(anonymous.statusCode, 401);
  assert.is(anonymous.json().code, 'UNAUTHORIZED');
  const sendOnly = await createApiKey(a.tenantId, { scopes: ['email:send'] });
  const refused = await ctx.app.inject({
    method: 'GET',
    url: '/emails/logs/stream',
    headers: { authorization: `Bearer ${sendOnly.key}` },
  });
  assert.is(refused.statusCode, 403);
  assert.is(refused.json().code, 'INSUFFICIENT_SCOPE');
  const otherTenant = await ctx.app.inject({
    method: 'GET',
    url: '/emails/logs/stream',
    headers: { ...a.asKey, 'x-tenant-id': b.tenantId },
  });
  assert.is(otherTenant.statusCode, 403);
});

test("backlog first, then only this tenant's changes, including status changes", async () => {
  const first = await sendAs(a.asKey, 'one');
  const second = await sendAs(a.asKey, 'two');
  await sendAs(b.asKey, 'other tenant');
  const stream = await openStream(a.asKey, '?backlog=5');
  try {
    const backlog = [await stream.next(), await stream.next()];
    assert.equal(
      backlog.map((frame) => frame.json.id),
      [first, second],
    );
    assert.is(backlog[0].event, 'email');
    assert.is(backlog[0].json.status, 'QUEUED');
    assert.equal(backlog[0].json.to, ['someone@example.com']);

    await sendAs(b.asKey, 'still the other tenant');
    const third = await sendAs(a.asKey, 'three');
    const live = await stream.next();
    assert.is(live.json.id, third, "the other tenant's sends never appear");
    assert.is(live.json.subject, 'three');

    await EmailLog.update({ status: 'SENT', sentAt: new Date() }, { where: { id: first } });
    const changed = await stream.next();
    assert.is(changed.json.id, first);
    assert.is(changed.json.status, 'SENT');
  } finally {
    stream.close();
  }
});

test('the session of a member works too, and Last-Event-ID resumes after the last frame seen', async () => {
  const stream = await openStream(a.asOwner, '?backlog=1');
  const last = await stream.next();
  stream.close();
  assert.ok(last.id, 'frames carry an id');
  const missed = await sendAs(a.asKey, 'sent while disconnected');
  const resumed = await openStream({ ...a.asOwner, 'last-event-id': last.id! });
  try {
    const frame = await resumed.next();
    assert.is(frame.json.id, missed);
  } finally {
    resumed.close();
  }
});

test('backlog=0 sends nothing old; a bad backlog is a 400', async () => {
  const bad = await ctx.app.inject({ method: 'GET', url: '/emails/logs/stream?backlog=1000', headers: a.asKey });
  assert.is(bad.statusCode, 400);
  assert.is(bad.json().code, 'VALIDATION_FAILED');
  const stream = await openStream(a.asKey, '?backlog=0');
  try {
    const fresh = await sendAs(a.asKey, 'fresh');
    assert.is((await stream.next()).json.id, fresh);
  } finally {
    stream.close();
  }
});

test('a change that commits late, with an updated_at the stream already passed, still arrives', async () => {
  const stream = await openStream(a.asKey, '?backlog=0');
  try {
    const late = await sendAs(a.asKey, 'late');
    assert.is((await stream.next()).json.id, late);
    const ahead = await sendAs(a.asKey, 'ahead');
    assert.is((await stream.next()).json.id, ahead);
    // As if its transaction had started before "ahead" was written but committed after it.
    const [row] = await ctx.db.sequelize.query<{ at: string }>(
      `SELECT updated_at::text AS at FROM email_logs WHERE id = :ahead`,
      { replacements: { ahead }, type: QueryTypes.SELECT },
    );
    await ctx.db.sequelize.query(
      `UPDATE email_logs SET status = 'SENT', updated_at = CAST(:at AS timestamptz) - interval '100 milliseconds' WHERE id = :late`,
      { replacements: { at: row.at, late } },
    );
    const frame = await stream.next();
    assert.is(frame.json.id, late);
    assert.is(frame.json.status, 'SENT');
  } finally {
    stream.close();
  }
});

/** Reads frames until the server ends the stream; answers the frames seen (event `end` included). */
async function untilEnded(
  headers: Record<string, string>,
  act: () => Promise<void>,
): Promise<{ ended: boolean; events: string[] }> {
  const stream = await openStream(headers, '?backlog=0');
  await act();
  const events: string[] = [];
  try {
    for (;;) {
      const frame = await stream.next(15_000);
      events.push(frame.event ?? 'message');
    }
  } catch (error) {
    return { ended: (error as Error).message === 'stream ended', events };
  } finally {
    stream.close();
  }
}

test('a stream ends when its API key is revoked', async () => {
  const key = await createApiKey(a.tenantId, { scopes: ['email:read'] });
  const result = await untilEnded({ authorization: `Bearer ${key.key}` }, async () => {
    const revoked = await ctx.app.inject({
      method: 'DELETE',
      url: `/tenants/${a.tenantId}/api-keys/${key.id}`,
      headers: a.asOwner,
    });
    assert.is(revoked.statusCode, 200, revoked.body);
  });
  assert.ok(result.ended, 'the server ended the stream');
  assert.equal(result.events, ['end']);
  const again = await fetch(`${baseUrl}/emails/logs/stream`, { headers: { authorization: `Bearer ${key.key}` } });
  assert.is(again.status, 401);
});

test('a stream ends when its sign-in ends (logout)', async () => {
  const email = `streamer-${Date.now()}@example.test`;
  const password = 'correct horse battery staple';
  const registered = await ctx.app.inject({ method: 'POST', url: '/auth/register', payload: { email, password } });
  assert.is(registered.statusCode, 201, registered.body);
  const login = (await ctx.app.inject({ method: 'POST', url: '/auth/login', payload: { email, password } })).json();
  const bearer = { authorization: `Bearer ${login.accessToken}` };
  const tenant = (
    await ctx.app.inject({ method: 'POST', url: '/tenants', headers: bearer, payload: { name: 'Streams' } })
  ).json();
  const result = await untilEnded({ ...bearer, 'x-tenant-id': tenant.id }, async () => {
    const out = await ctx.app.inject({ method: 'POST', url: '/auth/logout', headers: bearer });
    assert.is(out.statusCode, 200, out.body);
  });
  assert.ok(result.ended, 'the server ended the stream');
  assert.equal(result.events, ['end']);
});

test('the daemon closes while a stream is open', async () => {
  const stream = await openStream(a.asKey, '?backlog=0');
  const started = Date.now();
  await ctx.close();
  assert.ok(Date.now() - started < 10_000, 'close did not wait for the stream');
  await stream.next(2000).then(
    () => assert.unreachable('no frame after close'),
    () => undefined,
  );
});

test.run();
