// POST /emails/send-template through the one send pipeline to a real SMTP server in this process:
// the published version for the locale (with fallback), Liquid and React Email bodies, 422s.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { addVerifiedDomain, createApiKey, createWorld } from './helpers/fixtures.ts';
import { assertErrorBody } from './helpers/error-body.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp-sink.ts';
import { runJobs } from './helpers/send-jobs.ts';

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

async function publishedTemplate(payload: Record<string, unknown>): Promise<{ id: string; versionId: string }> {
  const res = await ctx.app.inject({ method: 'POST', url: '/templates', headers: world.asOwner, payload });
  assert.is(res.statusCode, 201, res.body);
  const template = res.json();
  const versionId = template.versions[0].id;
  const published = await ctx.app.inject({
    method: 'POST',
    url: `/templates/${template.id}/versions/${versionId}/publish`,
    headers: world.asOwner,
  });
  assert.is(published.statusCode, 201, published.body);
  return { id: template.id, versionId };
}

const sendTemplate = (payload: Record<string, unknown>, headers: Record<string, string> = world.asKey) =>
  ctx.app.inject({ method: 'POST', url: '/emails/send-template', headers, payload });

test('a Liquid template is rendered per locale and reaches the SMTP server', async () => {
  const { id, versionId } = await publishedTemplate({
    name: 'Receipt',
    slug: 'receipt',
    editorMode: 'html',
    locale: 'en',
    subject: 'Receipt for {{ name }}',
    htmlBody: '<p>Thanks {{ name }}, total {{ total }}</p>',
  });
  const fr = (
    await ctx.app.inject({
      method: 'POST',
      url: `/templates/${id}/versions`,
      headers: world.asOwner,
      payload: { locale: 'fr' },
    })
  ).json();
  await ctx.app.inject({
    method: 'PATCH',
    url: `/templates/${id}/versions/${fr.id}`,
    headers: world.asOwner,
    payload: { subject: 'Reçu pour {{ name }}', htmlBody: '<p>Merci {{ name }}</p>' },
  });
  await ctx.app.inject({ method: 'POST', url: `/templates/${id}/versions/${fr.id}/publish`, headers: world.asOwner });

  const res = await sendTemplate({
    slug: 'receipt',
    from: 'Acme <billing@acme.test>',
    to: 'ana@example.test',
    data: { name: '<Ana>', total: '12 €' },
    locale: 'de',
  });
  assert.is(res.statusCode, 202, res.body);
  const { id: emailId } = res.json();
  const [log] = await ctx.db.sequelize.query<{ template_version_id: string; locale: string }>(
    'SELECT template_version_id, locale FROM email_logs WHERE id = :id',
    { replacements: { id: emailId }, type: QueryTypes.SELECT },
  );
  assert.is(log.template_version_id, versionId, 'de falls back to the default locale en');
  assert.equal(await runJobs(ctx, 'send'), ['done']);
  const message = await sink.waitFor((m) => m.rcptTo.includes('ana@example.test'));
  assert.is(message.parsed.subject, 'Receipt for <Ana>');
  assert.ok(String(message.parsed.html).includes('Thanks &lt;Ana&gt;, total 12 €'));
  assert.match(String(message.parsed.text), /Thanks <Ana>, total 12 €/);

  const resFr = await sendTemplate({
    slug: 'receipt',
    from: 'billing@acme.test',
    to: 'zoe@example.test',
    data: { name: 'Zoé' },
    locale: 'fr-CA',
  });
  assert.is(resFr.statusCode, 202, resFr.body);
  await runJobs(ctx, 'send');
  const french = await sink.waitFor((m) => m.rcptTo.includes('zoe@example.test'));
  assert.is(french.parsed.subject, 'Reçu pour Zoé');
});

test('a rendered React Email template reaches the SMTP server', async () => {
  await publishedTemplate({
    name: 'Welcome',
    slug: 'welcome-react',
    editorMode: 'react-email',
    subject: 'Welcome {{ name }}',
    jsx: `import { Html, Body, Heading, Button } from '@react-email/components';
export default function Welcome({ name, url }: { name: string; url: string }) {
  return <Html lang="en"><Body><Heading>Hello {name}</Heading><Button href={url}>Open your dashboard</Button></Body></Html>;
}`,
  });
  const res = await sendTemplate({
    slug: 'welcome-react',
    from: 'hello@acme.test',
    to: 'ben@example.test',
    data: { name: 'Ben', url: 'https://app.acme.test/' },
  });
  assert.is(res.statusCode, 202, res.body);
  assert.equal(await runJobs(ctx, 'send'), ['done']);
  const message = await sink.waitFor((m) => m.rcptTo.includes('ben@example.test'));
  assert.is(message.parsed.subject, 'Welcome Ben');
  const html = String(message.parsed.html);
  assert.match(html, /<h1>Hello (<!-- -->)?Ben<\/h1>/);
  assert.match(html, /Open your dashboard/);
  assert.match(String(message.parsed.text), /Open your dashboard/);
  const [log] = await ctx.db.sequelize.query<{ status: string; subject: string }>(
    'SELECT status, subject FROM email_logs WHERE id = :id',
    { replacements: { id: res.json().id }, type: QueryTypes.SELECT },
  );
  assert.is(log.status, 'SENT');
  assert.is(log.subject, 'Welcome Ben');
});

test('422 when the template is unknown or has no published version; 400 without from', async () => {
  assertErrorBody(
    await sendTemplate({ slug: 'nope', from: 'a@acme.test', to: 'x@example.test' }),
    422,
    'TEMPLATE_NOT_FOUND',
  );
  const draft = await ctx.app.inject({
    method: 'POST',
    url: '/templates',
    headers: world.asOwner,
    payload: { name: 'D', slug: 'draft-only', editorMode: 'html', subject: 's', htmlBody: 'b' },
  });
  assert.is(draft.statusCode, 201);
  const body = assertErrorBody(
    await sendTemplate({ slug: 'draft-only', from: 'a@acme.test', to: 'x@example.test', locale: 'en' }),
    422,
    'TEMPLATE_NOT_PUBLISHED',
  );
  assert.match(body.message, /no published version/);
  assertErrorBody(await sendTemplate({ slug: 'receipt', to: 'x@example.test' }), 400, 'VALIDATION_FAILED');
  assertErrorBody(
    await sendTemplate({ slug: 'receipt', from: 'a@acme.test', to: 'x@example.test', subject: 'not allowed' }),
    400,
  );
  const [{ count }] = await ctx.db.sequelize.query<{ count: string }>(
    "SELECT count(*) FROM email_logs WHERE 'x@example.test' = ANY(to_addresses)",
    { type: QueryTypes.SELECT },
  );
  assert.is(Number(count), 0);
});

test("another tenant cannot send this tenant's template; the key needs email:send", async () => {
  const other = await createWorld(ctx.app);
  assertErrorBody(
    await sendTemplate({ slug: 'receipt', from: 'a@acme.test', to: 'x@example.test' }, other.asKey),
    422,
    'TEMPLATE_NOT_FOUND',
  );
  const reader = await createApiKey(world.tenantId, { scopes: ['templates:read'] });
  assertErrorBody(
    await sendTemplate(
      { slug: 'receipt', from: 'a@acme.test', to: 'x@example.test' },
      { authorization: `Bearer ${reader.key}` },
    ),
    403,
  );
});

test('data that the template cannot render with is refused before acceptance', async () => {
  await publishedTemplate({
    name: 'Big',
    slug: 'big',
    editorMode: 'html',
    subject: 's',
    htmlBody: '{% for i in (1..n) %}{{ i }}{% endfor %}',
  });
  assertErrorBody(
    await sendTemplate({ slug: 'big', from: 'a@acme.test', to: 'y@example.test', data: { n: 100000000 } }),
    422,
    'TEMPLATE_LIMIT_EXCEEDED',
  );
});

test.run();
