// Broadcast mail carries its unsubscribe link in the body as well as in List-Unsubscribe: a
// campaign sent through a real SMTP server arrives with a visible link in the HTML and the text,
// the link is the same opaque one-click URL as the header's, and following it unsubscribes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { addVerifiedDomain, createWorld } from './helpers/fixtures.ts';
import { runJobs } from './helpers/send-jobs.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp-sink.ts';

let ctx: TestContext;
let sink: SmtpSink;
let world: Awaited<ReturnType<typeof createWorld>>;

test.before(async () => {
  sink = await startSmtpSink();
  ctx = await createTestContext({
    env: { SMTP_URL: `smtp://127.0.0.1:${sink.port}`, PUBLIC_URL: 'http://mail.example.test' },
  });
  world = await createWorld(ctx.app);
  await addVerifiedDomain(ctx.db.sequelize, ctx.deps.secrets, world.tenantId);
});
test.after(async () => {
  await ctx?.close();
  await sink?.close();
});

function header(raw: string, name: string): string {
  const match = new RegExp(`^${name}:([^\\r\\n]*(?:\\r\\n[ \\t][^\\r\\n]*)*)`, 'mi').exec(raw);
  return (match?.[1] ?? '').replace(/\r\n[ \t]+/g, ' ').trim();
}

test('a campaign arrives with a visible unsubscribe link in HTML and text that unsubscribes', async () => {
  const [template] = await ctx.db.sequelize.query<{ id: string }>(
    `INSERT INTO templates (tenant_id, name, slug, editor_mode, default_locale) VALUES (:tenantId, 'News', 'news', 'html', 'en') RETURNING id`,
    { replacements: { tenantId: world.tenantId }, type: QueryTypes.SELECT },
  );
  await ctx.db.sequelize.query(
    `INSERT INTO template_versions (tenant_id, template_id, version, locale, subject, html_body, published_at)
     VALUES (:tenantId, :templateId, 1, 'en', 'Spring news', '<html><body><p>Hello {{ contact.email }}</p></body></html>', now())`,
    { replacements: { tenantId: world.tenantId, templateId: template.id } },
  );
  const contact = await ctx.app.inject({
    method: 'POST',
    url: '/contacts/bulk',
    headers: world.asKey,
    payload: { contacts: [{ email: 'reader@example.test', optIn: true }] },
  });
  assert.ok(contact.statusCode < 300, contact.body);
  const campaign = await ctx.app.inject({
    method: 'POST',
    url: '/campaigns',
    headers: world.asKey,
    payload: { name: 'Spring', templateId: template.id, audience: {} },
  });
  assert.is(campaign.statusCode, 201, campaign.body);
  const sent = await ctx.app.inject({
    method: 'POST',
    url: `/campaigns/${campaign.json().id}/send`,
    headers: world.asKey,
    payload: { from: 'news@acme.test' },
  });
  assert.ok(sent.statusCode < 300, sent.body);
  // Campaign sending is durable work: the expansion job queues the sends, then they are delivered.
  assert.equal(await runJobs(ctx, 'campaign'), ['done']);
  assert.equal(await runJobs(ctx, 'send'), ['done']);

  const received = await sink.waitFor((m) => m.rcptTo.includes('reader@example.test'));
  const listUnsubscribe = header(received.raw, 'List-Unsubscribe');
  const url = /^<(http:\/\/mail\.example\.test\/u\/[A-Za-z0-9_-]+)>$/.exec(listUnsubscribe)?.[1];
  assert.ok(url, listUnsubscribe);
  // RFC 8058 one-click, as Gmail and Yahoo require of bulk mail (issue 29's sender rules).
  assert.is(header(received.raw, 'List-Unsubscribe-Post'), 'List-Unsubscribe=One-Click');
  const html = String(received.parsed.html);
  const text = String(received.parsed.text);
  // Inside the body element, not after it; the link is the header's one-click URL.
  assert.match(html, new RegExp(`<a href="${url}">Unsubscribe</a>.</p></body>`));
  assert.ok(text.includes(`Unsubscribe: ${url}`), text);
  assert.ok(text.includes('Hello reader@example.test'), text);
  assert.match(
    header(received.raw, 'DKIM-Signature').replace(/\s+/g, '').toLowerCase(),
    /h=[^;]*list-unsubscribe:list-unsubscribe-post/,
  );

  // The body's link works like the header's: a GET only shows the page, a POST unsubscribes.
  const path = url.replace('http://mail.example.test', '');
  const page = await ctx.app.inject({ method: 'GET', url: path });
  assert.is(page.statusCode, 200);
  const [before] = await ctx.db.sequelize.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM suppressions WHERE tenant_id = :tenantId`,
    { replacements: { tenantId: world.tenantId }, type: QueryTypes.SELECT },
  );
  assert.is(before.n, 0);
  const done = await ctx.app.inject({
    method: 'POST',
    url: path,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'List-Unsubscribe=One-Click',
  });
  assert.ok(done.statusCode < 300, done.body);
  const [after] = await ctx.db.sequelize.query<{ email: string; reason: string }>(
    `SELECT email, reason FROM suppressions WHERE tenant_id = :tenantId`,
    { replacements: { tenantId: world.tenantId }, type: QueryTypes.SELECT },
  );
  assert.equal({ ...after }, { email: 'reader@example.test', reason: 'unsubscribe' });
});

test('a link token of the old signed base64-JSON format is refused', async () => {
  const old = `${Buffer.from(JSON.stringify({ k: 'u', e: '00000000-0000-0000-0000-000000000000', t: world.tenantId, a: 'x@example.test' })).toString('base64url')}.AAAAAAAAAAAAAAAAAAAAAA`;
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/u/${old}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'List-Unsubscribe=One-Click',
  });
  assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${res.statusCode} ${res.body}`);
});

test.run();
