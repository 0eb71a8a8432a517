// Batch sends render per recipient: inline Liquid subjects and bodies with each recipient's data
// (HTML-escaped in HTML only), by slug with each recipient's locale and send-template's fallback,
// by templateVersionId; one recipient's bad data rejects that recipient, bad Liquid the batch.
// What arrives is read from a real SMTP server.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { addVerifiedDomain, createWorld } from './helpers/fixtures.ts';
import { runJobs } from './helpers/send-jobs.ts';
import { startSmtpSink, type ReceivedMessage, type SmtpSink } from './helpers/smtp-sink.ts';

let ctx: TestContext;
let sink: SmtpSink;
let world: Awaited<ReturnType<typeof createWorld>>;

test.before(async () => {
  sink = await startSmtpSink();
  ctx = await createTestContext({ env: { SMTP_URL: `smtp://127.0.0.1:${sink.port}` } });
  world = await createWorld(ctx.app);
  await addVerifiedDomain(ctx.db.sequelize, ctx.deps.secrets, world.tenantId);
  await ctx.db.sequelize.query(`UPDATE tenants SET plan = 'business' WHERE id = :id`, {
    replacements: { id: world.tenantId },
  });
});
test.after(async () => {
  await ctx?.close();
  await sink?.close();
});

const batch = (payload: Record<string, unknown>) =>
  ctx.app.inject({ method: 'POST', url: '/emails/batch', headers: world.asKey, payload });
const to = (address: string): Promise<ReceivedMessage> => sink.waitFor((m) => m.rcptTo.includes(address));

test('an inline batch renders subject, HTML and text per recipient; bad data rejects only that recipient', async () => {
  const res = await batch({
    from: 'news@acme.test',
    subject: 'Hi {{ name }}',
    htmlBody: '<p>Hello {{ name }}, you have {{ count | default: 0 }} points</p>{% for i in (1..n) %}.{% endfor %}',
    textBody: 'Hello {{ name }}, {{ count | default: 0 }} points',
    recipients: [
      { to: 'ana@example.test', data: { name: 'Ana', count: 3 } },
      { to: 'bob@example.test', data: { name: '<b>Bob</b> & co' } },
      // A loop this data makes far too long: liquidjs's memory limit refuses to render it.
      { to: 'greedy@example.test', data: { name: 'Greedy', n: 50_000_000 } },
      { to: 'not an address', data: { name: 'Nobody' } },
    ],
  });
  assert.is(res.statusCode, 202, res.body);
  const body = res.json();
  assert.equal(
    body.accepted.map((a: { to: string }) => a.to),
    ['ana@example.test', 'bob@example.test'],
  );
  const rejected = Object.fromEntries(body.rejected.map((r: { to: string; reason: string }) => [r.to, r.reason]));
  assert.match(rejected['greedy@example.test'], /could not be rendered: memory alloc limit exceeded/);
  assert.match(rejected['not an address'], /^to /);
  assert.equal(await runJobs(ctx, 'send'), ['done', 'done']);

  const ana = await to('ana@example.test');
  assert.is(ana.parsed.subject, 'Hi Ana');
  assert.match(String(ana.parsed.html), '<p>Hello Ana, you have 3 points</p>');
  assert.is(String(ana.parsed.text).trim(), 'Hello Ana, 3 points');
  const bob = await to('bob@example.test');
  // Escaped in HTML, left alone in the subject and the text part.
  assert.is(bob.parsed.subject, 'Hi <b>Bob</b> & co');
  assert.match(String(bob.parsed.html), '<p>Hello &lt;b&gt;Bob&lt;/b&gt; &amp; co, you have 0 points</p>');
  assert.is(String(bob.parsed.text).trim(), 'Hello <b>Bob</b> & co, 0 points');
  assert.not.ok(
    sink.messages.some((m) => m.raw.includes('{{')),
    'no literal Liquid went out',
  );
  // The log keeps what was sent.
  const [log] = await ctx.db.sequelize.query<{ subject: string }>(`SELECT subject FROM email_logs WHERE id = :id`, {
    replacements: { id: body.accepted[0].id },
    type: QueryTypes.SELECT,
  });
  assert.is(log.subject, 'Hi Ana');
});

test("Liquid that does not parse is the whole batch's fault", async () => {
  const res = await batch({
    from: 'news@acme.test',
    subject: 'Hi {{ name',
    htmlBody: '<p>x</p>',
    recipients: [{ to: 'a@example.test' }],
  });
  assert.is(res.statusCode, 422, res.body);
  assert.is(res.json().code, 'TEMPLATE_INVALID');
});

async function template(
  slug: string,
  versions: { locale: string; subject: string; html: string; published?: boolean }[],
  defaultLocale = 'en',
): Promise<Record<string, string>> {
  const [row] = await ctx.db.sequelize.query<{ id: string }>(
    `INSERT INTO templates (tenant_id, name, slug, editor_mode, default_locale) VALUES (:tenantId, :slug, :slug, 'html', :defaultLocale) RETURNING id`,
    { replacements: { tenantId: world.tenantId, slug, defaultLocale }, type: QueryTypes.SELECT },
  );
  const ids: Record<string, string> = {};
  for (const [index, version] of versions.entries()) {
    const [inserted] = await ctx.db.sequelize.query<{ id: string }>(
      `INSERT INTO template_versions (tenant_id, template_id, version, locale, subject, html_body, published_at)
       VALUES (:tenantId, :templateId, :version, :locale, :subject, :html, ${version.published === false ? 'NULL' : 'now()'}) RETURNING id`,
      {
        replacements: {
          tenantId: world.tenantId,
          templateId: row.id,
          version: index + 1,
          locale: version.locale,
          subject: version.subject,
          html: version.html,
        },
        type: QueryTypes.SELECT,
      },
    );
    ids[version.locale] = inserted.id;
  }
  return ids;
}

test("a batch by slug picks each recipient's published version with send-template's fallback and renders its data", async () => {
  await template('welcome', [
    { locale: 'en', subject: 'Welcome {{ name }}', html: '<p>Hello {{ name }}</p>' },
    { locale: 'es', subject: 'Bienvenida {{ name }}', html: '<p>Hola {{ name }}</p>' },
    { locale: 'fr', subject: 'Bienvenue {{ name }}', html: '<p>Bonjour {{ name }}</p>' },
    { locale: 'de', subject: 'Willkommen {{ name }}', html: '<p>Hallo {{ name }}</p>', published: false },
  ]);
  const res = await batch({
    from: 'news@acme.test',
    slug: 'welcome',
    recipients: [
      { to: 'mx@example.test', locale: 'es-MX', data: { name: 'Lucía' } },
      { to: 'ca@example.test', locale: 'fr-CA', data: { name: 'Élodie' } },
      { to: 'de@example.test', locale: 'de', data: { name: 'Jonas' } },
      { to: 'none@example.test', data: { name: 'Sam' } },
    ],
  });
  assert.is(res.statusCode, 202, res.body);
  assert.is(res.json().accepted.length, 4);
  assert.equal(await runJobs(ctx, 'send'), ['done', 'done', 'done', 'done']);
  assert.is((await to('mx@example.test')).parsed.subject, 'Bienvenida Lucía');
  assert.is((await to('ca@example.test')).parsed.subject, 'Bienvenue Élodie');
  // de has only a draft: the template's default locale.
  assert.is((await to('de@example.test')).parsed.subject, 'Welcome Jonas');
  const none = await to('none@example.test');
  assert.is(none.parsed.subject, 'Welcome Sam');
  assert.match(String(none.parsed.html), '<p>Hello Sam</p>');
});

test("a batch by slug rejects a recipient whose locale has nothing published, and by templateVersionId renders each one's data", async () => {
  const ids = await template(
    'es-only',
    [{ locale: 'es', subject: 'Hola {{ name }}', html: '<p>Hola {{ name }}{% for i in (1..n) %}.{% endfor %}</p>' }],
    'es',
  );
  const bySlug = await batch({
    from: 'news@acme.test',
    slug: 'es-only',
    locale: 'es',
    recipients: [
      { to: 'x@example.test', data: { name: 'X' } },
      { to: 'greedy2@example.test', data: { name: 'G', n: 50_000_000 } },
    ],
  });
  assert.is(bySlug.statusCode, 202, bySlug.body);
  assert.equal(
    bySlug.json().accepted.map((a: { to: string }) => a.to),
    ['x@example.test'],
  );
  assert.match(bySlug.json().rejected[0].reason, /memory alloc limit exceeded/);
  const byVersion = await batch({
    from: 'news@acme.test',
    templateVersionId: ids.es,
    recipients: [
      { to: 'v1@example.test', data: { name: 'Uno' } },
      { to: 'v2@example.test', data: { name: '<i>Dos</i>' } },
    ],
  });
  assert.is(byVersion.statusCode, 202, byVersion.body);
  assert.equal(await runJobs(ctx, 'send'), ['done', 'done', 'done']);
  assert.is((await to('x@example.test')).parsed.subject, 'Hola X');
  assert.is((await to('v1@example.test')).parsed.subject, 'Hola Uno');
  assert.match(String((await to('v2@example.test')).parsed.html), 'Hola &lt;i&gt;Dos&lt;/i&gt;');
  const unknown = await batch({ from: 'news@acme.test', slug: 'missing', recipients: [{ to: 'x@example.test' }] });
  assert.is(unknown.statusCode, 422);
  assert.is(unknown.json().code, 'TEMPLATE_NOT_FOUND');
});

test.run();
