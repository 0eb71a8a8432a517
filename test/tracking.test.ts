// Open pixel, click redirect, and RFC 8058 unsubscribe (GET shows a page, POST suppresses).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createWorld } from './helpers/fixtures.ts';
import { runJobs } from './helpers/send-jobs.ts';

let ctx: TestContext;
let world: Awaited<ReturnType<typeof createWorld>>;
let raw = '';
let emailId = '';

test.before(async () => {
  ctx = await createTestContext({ env: { PUBLIC_URL: 'http://mail.example.test' } });
  world = await createWorld(ctx.app);
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: world.asKey,
    payload: {
      from: 'app@acme.test',
      to: 'Ana <ana@example.test>',
      subject: 'T',
      htmlBody: '<html><body><a href="https://acme.test/a?b=1">go</a></body></html>',
      trackOpens: true,
      trackClicks: true,
    },
  });
  emailId = res.json().id;
  await runJobs(ctx, 'send');
  raw = (await ctx.app.inject({ method: 'GET', url: `/emails/logs/${emailId}`, headers: world.asKey })).json().raw;
});
test.after(async () => {
  await ctx?.close();
});

function pathOf(pattern: RegExp): string {
  const unfolded = raw
    .replace(/=\r\n/g, '')
    .replace(/=3D/g, '=')
    .replace(/\r\n[ \t]+/g, ' ');
  const match = unfolded.match(pattern);
  assert.ok(match, `no ${pattern} in the message`);
  return new URL(match![1]).pathname;
}

async function eventTypes(): Promise<string[]> {
  const rows = await ctx.db.sequelize.query<{ type: string }>(
    `SELECT type FROM events WHERE tenant_id = :t ORDER BY created_at`,
    { replacements: { t: world.tenantId }, type: QueryTypes.SELECT },
  );
  return rows.map((r) => r.type);
}

test('the open pixel answers a GIF and records email.opened', async () => {
  const res = await ctx.app.inject({ method: 'GET', url: pathOf(/src="(http:\/\/mail\.example\.test\/t\/o\/[^"]+)"/) });
  assert.is(res.statusCode, 200);
  assert.is(res.headers['content-type'], 'image/gif');
  assert.ok((await eventTypes()).includes('email.opened'));
  const bad = await ctx.app.inject({ method: 'GET', url: '/t/o/forged.token.gif' });
  assert.is(bad.statusCode, 200);
});

test('a click redirects to the original URL and records email.clicked; forged tokens 404', async () => {
  const path = pathOf(/href="(http:\/\/mail\.example\.test\/t\/c\/[^"]+)"/);
  const res = await ctx.app.inject({ method: 'GET', url: path });
  assert.is(res.statusCode, 302);
  assert.is(res.headers.location, 'https://acme.test/a?b=1');
  const [event] = await ctx.db.sequelize.query<{ data: { url: string } }>(
    `SELECT data FROM events WHERE type = 'email.clicked' AND email_id = :id`,
    { replacements: { id: emailId }, type: QueryTypes.SELECT },
  );
  assert.is(event.data.url, 'https://acme.test/a?b=1');
  const token = path.split('/').pop()!;
  const [body] = token.split('.');
  const forged = Buffer.from(JSON.stringify({ k: 'c', e: emailId, u: 'https://evil.test/' })).toString('base64url');
  assert.is((await ctx.app.inject({ method: 'GET', url: `/t/c/${forged}.${token.split('.')[1]}` })).statusCode, 404);
  assert.ok(body.length > 0);
});

test('GET /u/:token only shows a page; POST unsubscribes (one-click), suppresses and emits contact.unsubscribed', async () => {
  const path = pathOf(/List-Unsubscribe: <(http:\/\/mail\.example\.test\/u\/[^>]+)>/);
  const page = await ctx.app.inject({ method: 'GET', url: path });
  assert.is(page.statusCode, 200);
  assert.match(page.body, /<form method="post">/);
  assert.is(page.headers['set-cookie'], undefined);
  let suppressed = (
    await ctx.app.inject({ method: 'GET', url: '/suppressions?email=ana@example.test', headers: world.asKey })
  ).json();
  assert.is(suppressed.meta.total, 0);
  const post = await ctx.app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'List-Unsubscribe=One-Click',
  });
  assert.is(post.statusCode, 200);
  assert.is(post.headers.location, undefined);
  assert.is(post.headers['set-cookie'], undefined);
  suppressed = (
    await ctx.app.inject({ method: 'GET', url: '/suppressions?email=ana@example.test', headers: world.asKey })
  ).json();
  assert.is(suppressed.data[0].reason, 'unsubscribe');
  assert.ok((await eventTypes()).includes('contact.unsubscribed'));
  const forged = await ctx.app.inject({
    method: 'POST',
    url: '/u/abc.def-forged-token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'List-Unsubscribe=One-Click',
  });
  assert.is(forged.statusCode, 404);
});

test.run();
