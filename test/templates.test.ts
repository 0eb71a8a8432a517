// Templates over HTTP on a real database: CRUD and filters, slugs, the version life cycle
// (create/edit/publish/unpublish/delete), one published version per locale, locale fallback,
// Liquid escaping and strict filters, tags, tenant isolation and access rules.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { addMember, createAdmin, createApiKey, createWorld } from './helpers/fixtures.ts';
import { assertErrorBody } from './helpers/error-body.ts';
import { resolvePublishedVersion, renderTemplateForSend } from '../daemon/modules/templates/render.ts';

let ctx: TestContext;
let world: Awaited<ReturnType<typeof createWorld>>;

test.before(async () => {
  ctx = await createTestContext();
  world = await createWorld(ctx.app);
});
test.after(async () => {
  await ctx?.close();
});

type Headers = Record<string, string>;
const call = (
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  payload?: unknown,
  headers: Headers = world.asOwner,
) =>
  ctx.app.inject({
    method,
    url,
    headers,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });

async function createHtmlTemplate(slug: string, extra: Record<string, unknown> = {}) {
  const res = await call('POST', '/templates', {
    name: `Template ${slug}`,
    slug,
    editorMode: 'html',
    subject: 'Hello {{ name }}',
    htmlBody: '<p>Hi {{ name }}</p>',
    ...extra,
  });
  assert.is(res.statusCode, 201, res.body);
  return res.json();
}

test('POST /templates creates the template and its first version; GET reads it back', async () => {
  const created = await createHtmlTemplate('welcome', { locale: 'en' });
  assert.is(created.slug, 'welcome');
  assert.is(created.status, 'draft');
  assert.is(created.editorMode, 'html');
  assert.is(created.defaultLocale, 'en');
  assert.is(created.versions.length, 1);
  assert.is(created.versions[0].version, 1);
  assert.is(created.versions[0].subject, 'Hello {{ name }}');
  assert.is(created.versions[0].published, false);
  const got = await call('GET', `/templates/${created.id}`);
  assert.is(got.statusCode, 200);
  assert.equal(got.json(), created);
  const [row] = await ctx.db.sequelize.query<{ tenant_id: string; created_by: string }>(
    'SELECT tenant_id, created_by FROM templates WHERE id = :id',
    { replacements: { id: created.id }, type: QueryTypes.SELECT },
  );
  assert.is(row.tenant_id, world.tenantId);
  assert.is(row.created_by, world.owner.id);
});

test('slugs are unique per tenant (409) but free across tenants', async () => {
  await createHtmlTemplate('dup-slug');
  assertErrorBody(
    await call('POST', '/templates', { name: 'x', slug: 'dup-slug', editorMode: 'html', subject: 's', htmlBody: 'b' }),
    409,
    'SLUG_TAKEN',
  );
  const other = await createWorld(ctx.app);
  const res = await call(
    'POST',
    '/templates',
    { name: 'x', slug: 'dup-slug', editorMode: 'html', subject: 's', htmlBody: 'b' },
    other.asOwner,
  );
  assert.is(res.statusCode, 201);
  const second = await createHtmlTemplate('dup-slug-2');
  assertErrorBody(await call('PATCH', `/templates/${second.id}`, { slug: 'dup-slug' }), 409, 'SLUG_TAKEN');
});

test('bad bodies are 400 with details; content must fit the editor mode', async () => {
  const missing = assertErrorBody(
    await call('POST', '/templates', { name: 'x', editorMode: 'html', subject: 's' }),
    400,
    'VALIDATION_FAILED',
  );
  assert.ok(missing.details?.some((d) => d.field === 'slug'));
  assertErrorBody(
    await call('POST', '/templates', { name: 'x', slug: 'Bad Slug', editorMode: 'html', subject: 's', htmlBody: 'b' }),
    400,
  );
  assertErrorBody(
    await call('POST', '/templates', { name: 'x', slug: 'mode', editorMode: 'mjml', subject: 's', htmlBody: 'b' }),
    400,
  );
  const noBody = assertErrorBody(
    await call('POST', '/templates', { name: 'x', slug: 'nobody', editorMode: 'html', subject: 's' }),
    400,
  );
  assert.ok(noBody.details?.some((d) => d.field === 'htmlBody'));
  const noJsx = assertErrorBody(
    await call('POST', '/templates', { name: 'x', slug: 'nojsx', editorMode: 'react-email', subject: 's' }),
    400,
  );
  assert.ok(noJsx.details?.some((d) => d.field === 'jsx'));
  assertErrorBody(
    await call('POST', '/templates', {
      name: 'x',
      slug: 'proj',
      editorMode: 'html',
      subject: 's',
      htmlBody: 'b',
      projectId: crypto.randomUUID(),
    }),
    422,
    'UNKNOWN_PROJECT',
  );
});

test('an unknown Liquid filter or broken syntax is refused when saved (422 naming the problem)', async () => {
  const filter = assertErrorBody(
    await call('POST', '/templates', {
      name: 'x',
      slug: 'badfilter',
      editorMode: 'html',
      subject: 's',
      htmlBody: '{{ name | shout }}',
    }),
    422,
    'TEMPLATE_INVALID',
  );
  assert.match(filter.message, /HTML body/);
  assert.match(filter.message, /undefined filter: shout/);
  const syntax = assertErrorBody(
    await call('POST', '/templates', {
      name: 'x',
      slug: 'badsyntax',
      editorMode: 'html',
      subject: '{% if %}',
      htmlBody: 'x',
    }),
    422,
    'TEMPLATE_INVALID',
  );
  assert.match(syntax.message, /subject/);
  const [{ count }] = await ctx.db.sequelize.query<{ count: string }>(
    "SELECT count(*) FROM templates WHERE slug IN ('badfilter', 'badsyntax')",
    { type: QueryTypes.SELECT },
  );
  assert.is(Number(count), 0);
});

test('version life cycle: copy of the latest, edit, publish, frozen once published, unpublish, delete', async () => {
  const template = await createHtmlTemplate('lifecycle');
  const id = template.id;
  const v1 = template.versions[0];
  const v2res = await call('POST', `/templates/${id}/versions`);
  assert.is(v2res.statusCode, 201, v2res.body);
  const v2 = v2res.json();
  assert.is(v2.version, 2);
  assert.is(v2.subject, v1.subject);
  assert.is(v2.htmlBody, v1.htmlBody);
  assert.is(v2.locale, 'en');

  const edited = await call('PATCH', `/templates/${id}/versions/${v2.id}`, {
    subject: 'Welcome, {{ name }}!',
    textBody: 'Hi {{ name }}',
  });
  assert.is(edited.statusCode, 200, edited.body);
  assert.is(edited.json().subject, 'Welcome, {{ name }}!');
  assertErrorBody(
    await call('PATCH', `/templates/${id}/versions/${v2.id}`, { htmlBody: '{{ x | nope }}' }),
    422,
    'TEMPLATE_INVALID',
  );

  const published = await call('POST', `/templates/${id}/versions/${v2.id}/publish`);
  assert.is(published.statusCode, 201, published.body);
  assert.is(published.json().published, true);
  assert.ok(published.json().publishedAt);
  const detail = (await call('GET', `/templates/${id}`)).json();
  assert.is(detail.status, 'published');
  assert.equal(detail.publishedLocales, ['en']);

  assertErrorBody(
    await call('PATCH', `/templates/${id}/versions/${v2.id}`, { subject: 'changed' }),
    409,
    'VERSION_PUBLISHED',
  );
  assertErrorBody(await call('DELETE', `/templates/${id}/versions/${v2.id}`), 409, 'VERSION_PUBLISHED');

  // Publishing v1 for the same locale unpublishes v2.
  assert.is((await call('POST', `/templates/${id}/versions/${v1.id}/publish`)).statusCode, 201);
  assert.is((await call('GET', `/templates/${id}/versions/${v2.id}`)).json().published, false);
  assert.is((await call('GET', `/templates/${id}/versions/${v1.id}`)).json().published, true);
  const [{ count }] = await ctx.db.sequelize.query<{ count: string }>(
    'SELECT count(*) FROM template_versions WHERE template_id = :id AND published_at IS NOT NULL',
    { replacements: { id }, type: QueryTypes.SELECT },
  );
  assert.is(Number(count), 1);

  const unpublished = await call('POST', `/templates/${id}/versions/${v1.id}/unpublish`);
  assert.is(unpublished.statusCode, 201);
  assert.is(unpublished.json().published, false);
  assert.is((await call('GET', `/templates/${id}`)).json().status, 'draft');

  assert.equal((await call('DELETE', `/templates/${id}/versions/${v2.id}`)).json(), { ok: true });
  assertErrorBody(await call('GET', `/templates/${id}/versions/${v2.id}`), 404);
  assertErrorBody(await call('DELETE', `/templates/${id}/versions/${v1.id}`), 409, 'LAST_VERSION');
});

test('one published version per locale; resolvePublishedVersion falls back to the language, then the default locale', async () => {
  const template = await createHtmlTemplate('localised', { locale: 'en', subject: 'Hello {{ name }}' });
  const id = template.id;
  const en = template.versions[0];
  const fr = (await call('POST', `/templates/${id}/versions`, { locale: 'fr' })).json();
  assert.is(fr.locale, 'fr');
  await call('PATCH', `/templates/${id}/versions/${fr.id}`, { subject: 'Bonjour {{ name }}' });
  const sequelize = ctx.db.sequelize;
  assert.is(await resolvePublishedVersion(sequelize, world.tenantId, 'localised', 'fr'), null);

  await call('POST', `/templates/${id}/versions/${en.id}/publish`);
  await call('POST', `/templates/${id}/versions/${fr.id}/publish`);
  // Both stay published: they are different locales.
  assert.equal((await call('GET', `/templates/${id}`)).json().publishedLocales, ['en', 'fr']);

  assert.is((await resolvePublishedVersion(sequelize, world.tenantId, 'localised', 'fr'))?.id, fr.id);
  assert.is((await resolvePublishedVersion(sequelize, world.tenantId, 'localised', 'fr-CA'))?.id, fr.id);
  assert.is((await resolvePublishedVersion(sequelize, world.tenantId, 'localised', 'de'))?.id, en.id);
  assert.is((await resolvePublishedVersion(sequelize, world.tenantId, 'localised'))?.id, en.id);
  assert.is(await resolvePublishedVersion(sequelize, world.tenantId, 'no-such-slug', 'en'), null);
  const other = await createWorld(ctx.app);
  assert.is(await resolvePublishedVersion(sequelize, other.tenantId, 'localised', 'en'), null);

  const rendered = await renderTemplateForSend(
    { sequelize, reactEmailSandbox: ctx.workerResources.reactEmailSandbox },
    { tenantId: world.tenantId },
    { versionId: fr.id, data: { name: 'Zoé' } },
  );
  assert.is(rendered.subject, 'Bonjour Zoé');
  const foreign = await renderTemplateForSend(
    { sequelize, reactEmailSandbox: ctx.workerResources.reactEmailSandbox },
    { tenantId: other.tenantId },
    { versionId: fr.id, data: {} },
  ).then(
    () => 'rendered',
    (e: { statusCode?: number }) => e.statusCode,
  );
  assert.is(foreign, 404);

  // With the default locale unpublished, an unmatched locale finds nothing.
  await call('POST', `/templates/${id}/versions/${en.id}/unpublish`);
  assert.is(await resolvePublishedVersion(sequelize, world.tenantId, 'localised', 'de'), null);
});

test('preview: variables escaped in HTML, not in text or subject; text derived from HTML when absent', async () => {
  const template = await createHtmlTemplate('escaping', {
    subject: 'For {{ name }}',
    htmlBody: '<h1>Hi {{ name }}</h1><p>{{ user.city }}</p>',
  });
  const version = template.versions[0];
  const name = '<script>alert(1)</script>';
  const res = await call('POST', `/templates/${template.id}/versions/${version.id}/preview`, {
    data: { name, user: { city: 'Paris & Co' } },
  });
  assert.is(res.statusCode, 200, res.body);
  const body = res.json();
  assert.is(body.subject, `For ${name}`);
  assert.ok(body.html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
  assert.not.ok(body.html.includes('<script>'));
  assert.ok(body.html.includes('Paris &amp; Co'));
  assert.match(body.text, /HI <SCRIPT>ALERT\(1\)<\/SCRIPT>|Hi <script>alert\(1\)<\/script>/);
  assert.ok(body.text.includes('Paris & Co'));

  const withText = await call('POST', `/templates/${template.id}/versions`);
  const v2 = withText.json();
  await call('PATCH', `/templates/${template.id}/versions/${v2.id}`, { textBody: 'Plain {{ name }}' });
  const preview2 = (
    await call('POST', `/templates/${template.id}/versions/${v2.id}/preview`, { data: { name } })
  ).json();
  assert.is(preview2.text, `Plain ${name}`);
  // No body at all: rendered with no data.
  const empty = await call('POST', `/templates/${template.id}/versions/${v2.id}/preview`);
  assert.is(empty.statusCode, 200, empty.body);
  assert.is(empty.json().subject, 'For');
});

test('rendering limits: includes read nothing, runaway loops stop with 422', async () => {
  const template = await createHtmlTemplate('limits', { htmlBody: "{% include 'package.json' %}" });
  const res = await call('POST', `/templates/${template.id}/versions/${template.versions[0].id}/preview`, { data: {} });
  const body = assertErrorBody(res, 422, 'TEMPLATE_RENDER_FAILED');
  assert.not.match(body.message, /svc-email/);
  const loop = await createHtmlTemplate('loop', { htmlBody: '{% for i in (1..100000000) %}{{ i }}{% endfor %}' });
  const started = Date.now();
  assertErrorBody(
    await call('POST', `/templates/${loop.id}/versions/${loop.versions[0].id}/preview`, {}),
    422,
    'TEMPLATE_LIMIT_EXCEEDED',
  );
  assert.ok(Date.now() - started < 3000);
});

test('list: pages and filters (search, status, editorMode, projectId); API key with templates:read', async () => {
  const fresh = await createWorld(ctx.app);
  const h = fresh.asOwner;
  const mk = async (slug: string, extra: Record<string, unknown> = {}) => {
    const res = await call(
      'POST',
      '/templates',
      { name: `N ${slug}`, slug, editorMode: 'html', subject: 's', htmlBody: 'b', ...extra },
      h,
    );
    assert.is(res.statusCode, 201, res.body);
    return res.json();
  };
  const a = await mk('alpha-news');
  await mk('beta-receipt');
  const c = await mk('gamma-news');
  await call('POST', `/templates/${c.id}/versions/${c.versions[0].id}/publish`, undefined, h);
  const [{ id: projectId }] = await ctx.db.sequelize.query<{ id: string }>(
    'INSERT INTO projects (tenant_id, name) VALUES (:t, :n) RETURNING id',
    { replacements: { t: fresh.tenantId, n: 'P' }, type: QueryTypes.SELECT },
  );
  await call('PATCH', `/templates/${a.id}`, { projectId }, h);

  const all = (await call('GET', '/templates?limit=2&page=1', undefined, h)).json();
  assert.equal(all.meta, { page: 1, limit: 2, total: 3, totalPages: 2 });
  assert.is(all.data.length, 2);
  const page2 = (await call('GET', '/templates?limit=2&page=2', undefined, h)).json();
  assert.is(page2.data.length, 1);
  const slugs = (q: string) =>
    call('GET', `/templates?${q}`, undefined, h).then((r) =>
      r
        .json()
        .data.map((t: { slug: string }) => t.slug)
        .sort(),
    );
  assert.equal(await slugs('search=news'), ['alpha-news', 'gamma-news']);
  assert.equal(await slugs('search=N%20BETA'), ['beta-receipt']);
  assert.equal(await slugs('status=published'), ['gamma-news']);
  assert.equal(await slugs('status=draft'), ['alpha-news', 'beta-receipt']);
  assert.equal(await slugs('editorMode=react-email'), []);
  assert.equal(await slugs(`projectId=${projectId}`), ['alpha-news']);
  assertErrorBody(await call('GET', '/templates?status=live', undefined, h), 400);

  const reader = await createApiKey(fresh.tenantId, { scopes: ['templates:read'] });
  const byKey = await call('GET', '/templates', undefined, { authorization: `Bearer ${reader.key}` });
  assert.is(byKey.statusCode, 200);
  assert.is(byKey.json().meta.total, 3);
  const sender = await createApiKey(fresh.tenantId, { scopes: ['email:send'] });
  assertErrorBody(await call('GET', '/templates', undefined, { authorization: `Bearer ${sender.key}` }), 403);
  // Other routes are JWT only.
  assertErrorBody(await call('GET', `/templates/${a.id}`, undefined, { authorization: `Bearer ${reader.key}` }), 403);
  assertErrorBody(
    await call(
      'POST',
      '/templates',
      { name: 'x', slug: 'bykey', editorMode: 'html', subject: 's', htmlBody: 'b' },
      { authorization: `Bearer ${reader.key}` },
    ),
    403,
  );
});

test("another tenant's template, version and tag are 404; viewers read but do not write", async () => {
  const template = await createHtmlTemplate('private');
  const tag = (await call('POST', '/templates/tags', { name: 'secret' })).json();
  const other = await createWorld(ctx.app);
  assertErrorBody(await call('GET', `/templates/${template.id}`, undefined, other.asOwner), 404);
  assertErrorBody(await call('PATCH', `/templates/${template.id}`, { name: 'mine' }, other.asOwner), 404);
  assertErrorBody(await call('DELETE', `/templates/${template.id}`, undefined, other.asOwner), 404);
  assertErrorBody(
    await call('GET', `/templates/${template.id}/versions/${template.versions[0].id}`, undefined, other.asOwner),
    404,
  );
  assertErrorBody(
    await call(
      'POST',
      `/templates/${template.id}/versions/${template.versions[0].id}/publish`,
      undefined,
      other.asOwner,
    ),
    404,
  );
  assertErrorBody(await call('DELETE', `/templates/tags/${tag.id}`, undefined, other.asOwner), 404);
  const otherTemplate = (
    await call(
      'POST',
      '/templates',
      { name: 'o', slug: 'o', editorMode: 'html', subject: 's', htmlBody: 'b' },
      other.asOwner,
    )
  ).json();
  assertErrorBody(await call('POST', `/templates/${otherTemplate.id}/tags/${tag.id}`, undefined, other.asOwner), 404);
  assert.is((await call('GET', '/templates', undefined, other.asOwner)).json().meta.total, 1);

  const viewer = await createAdmin(ctx.app);
  await addMember(world.tenantId, viewer.id, 'viewer');
  const asViewer = { authorization: `Bearer ${viewer.token}`, 'x-tenant-id': world.tenantId };
  assert.is((await call('GET', `/templates/${template.id}`, undefined, asViewer)).statusCode, 200);
  assertErrorBody(await call('PATCH', `/templates/${template.id}`, { name: 'viewer edit' }, asViewer), 403);
});

test('tags: create, list, attach, detach, delete; duplicate copies versions and tags as a draft', async () => {
  const template = await createHtmlTemplate('tagged');
  const created = await call('POST', '/templates/tags', { name: 'onboarding' });
  assert.is(created.statusCode, 201, created.body);
  const tag = created.json();
  assertErrorBody(await call('POST', '/templates/tags', { name: 'onboarding' }), 409, 'TAG_EXISTS');
  assertErrorBody(await call('POST', '/templates/tags', { name: 'Not Valid' }), 400);
  assert.ok((await call('GET', '/templates/tags')).json().some((t: { id: string }) => t.id === tag.id));

  const attached = await call('POST', `/templates/${template.id}/tags/${tag.id}`);
  assert.is(attached.statusCode, 200, attached.body);
  assert.equal(
    attached.json().tags.map((t: { name: string }) => t.name),
    ['onboarding'],
  );
  assert.is((await call('POST', `/templates/${template.id}/tags/${tag.id}`)).statusCode, 200);
  assert.equal(
    (await call('GET', `/templates/${template.id}/tags`)).json().map((t: { id: string }) => t.id),
    [tag.id],
  );

  await call('POST', `/templates/${template.id}/versions/${template.versions[0].id}/publish`);
  const dup = await call('POST', `/templates/${template.id}/duplicate`);
  assert.is(dup.statusCode, 201, dup.body);
  const copy = dup.json();
  assert.is(copy.slug, 'tagged-copy');
  assert.is(copy.status, 'draft');
  assert.is(copy.versions.length, 1);
  assert.is(copy.versions[0].htmlBody, template.versions[0].htmlBody);
  assert.equal(
    copy.tags.map((t: { id: string }) => t.id),
    [tag.id],
  );
  assert.is((await call('POST', `/templates/${template.id}/duplicate`)).json().slug, 'tagged-copy-2');

  const detached = await call('DELETE', `/templates/${template.id}/tags/${tag.id}`);
  assert.equal(detached.json().tags, []);
  assert.equal((await call('DELETE', `/templates/tags/${tag.id}`)).json(), { ok: true });
  assert.equal((await call('GET', `/templates/${copy.id}/tags`)).json(), []);
  assertErrorBody(await call('DELETE', `/templates/tags/${tag.id}`), 404);
});

test('DELETE /templates/:id removes the template and its versions', async () => {
  const template = await createHtmlTemplate('doomed');
  assert.equal((await call('DELETE', `/templates/${template.id}`)).json(), { ok: true });
  assertErrorBody(await call('GET', `/templates/${template.id}`), 404);
  const [{ count }] = await ctx.db.sequelize.query<{ count: string }>(
    'SELECT count(*) FROM template_versions WHERE template_id = :id',
    { replacements: { id: template.id }, type: QueryTypes.SELECT },
  );
  assert.is(Number(count), 0);
});

test('the templates routes are real (no 501), and /templates/tags is not taken for an id', async () => {
  const spec = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  assert.ok(spec.paths['/templates/{id}/versions/{versionId}/publish']);
  const tags = await call('GET', '/templates/tags');
  assert.is(tags.statusCode, 200);
  assert.ok(Array.isArray(tags.json()));
});

test.run();
