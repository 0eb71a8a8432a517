import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { addMember, createAdmin, createApiKey, createWorld } from './helpers/fixtures.ts';
import { waitFor } from './helpers/wait.ts';

let ctx: TestContext;
let world: Awaited<ReturnType<typeof createWorld>>;

test.before(async () => {
  ctx = await createTestContext();
  world = await createWorld(ctx.app);
});
test.after(async () => {
  await ctx?.close();
});

async function rows<T extends object = Record<string, unknown>>(
  sql: string,
  replacements: Record<string, unknown> = {},
): Promise<T[]> {
  return ctx.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });
}

function put(body: unknown, headers: Record<string, string> = world.asKey) {
  return ctx.app.inject({ method: 'PUT', url: '/contacts', headers, payload: body as object });
}

test('PUT /contacts creates a contact, then updates the same one by email and by externalId', async () => {
  const created = await put({
    email: 'Ada@Example.com',
    firstName: 'Ada',
    locale: 'en-GB',
    optIn: true,
    tags: ['vip', 'beta'],
    attributes: { plan: 'gold' },
  });
  assert.is(created.statusCode, 200);
  const contact = created.json();
  assert.is(contact.email, 'Ada@Example.com');
  assert.equal(contact.tags, ['beta', 'vip']);
  assert.equal(contact.attributes, { plan: 'gold' });
  assert.is(contact.externalId, null);
  assert.is(contact.optIn, true);

  const again = await put({ email: 'ada@example.com', externalId: 'u-1', lastName: 'Lovelace' });
  assert.is(again.statusCode, 200);
  assert.is(again.json().id, contact.id, 'matched by email, case-insensitively');
  assert.is(again.json().externalId, 'u-1');
  assert.is(again.json().firstName, 'Ada', 'omitted fields keep their value');
  assert.equal(again.json().tags, ['beta', 'vip'], 'omitted tags keep their value');

  const byExternal = await put({ email: 'ada@new.example', externalId: 'u-1', tags: ['vip'] });
  assert.is(byExternal.json().id, contact.id, 'matched by externalId, address changed');
  assert.is(byExternal.json().email, 'ada@new.example');
  assert.equal(byExternal.json().tags, ['vip']);

  const [row] = await rows<{ email: string; external_id: string; tenant_id: string; last_name: string }>(
    'SELECT email, external_id, tenant_id, last_name FROM contacts WHERE id = :id',
    { id: contact.id },
  );
  assert.equal(row, { email: 'ada@new.example', external_id: 'u-1', tenant_id: world.tenantId, last_name: 'Lovelace' });
  const links = await rows<{ name: string }>(
    'SELECT t.name FROM contact_tag_links l JOIN contact_tags t ON t.id = l.tag_id WHERE l.contact_id = :id',
    { id: contact.id },
  );
  assert.equal(
    links.map((l) => l.name),
    ['vip'],
  );
});

test('PUT /contacts rejects bad input with the error body', async () => {
  const bad = await put({ email: 'not-an-address', tags: ['Bad Tag'], locale: 'english!' });
  assert.is(bad.statusCode, 400);
  const body = bad.json();
  assert.is(body.code, 'VALIDATION_FAILED');
  const fields = body.details.map((d: { field: string }) => d.field);
  assert.ok(fields.includes('email'));
  assert.ok(fields.some((f: string) => f.startsWith('tags')));
  assert.ok(fields.includes('locale'));
  const extra = await put({ email: 'x@example.com', nickname: 'x' });
  assert.is(extra.statusCode, 400);
  assert.is(extra.json().details[0].field, 'nickname');
});

test('PUT /contacts answers 409 when the address belongs to a contact with another externalId', async () => {
  await put({ email: 'taken@example.com', externalId: 'a' });
  const res = await put({ email: 'taken@example.com', externalId: 'b' });
  assert.is(res.statusCode, 409);
  assert.is(res.json().code, 'CONTACT_EMAIL_TAKEN');
  const moved = await put({ email: 'other@example.com', externalId: 'a' });
  assert.is(moved.statusCode, 200);
  const clash = await put({ email: 'other@example.com', externalId: 'c' });
  assert.is(clash.statusCode, 409);
});

test('scopes: contacts:read cannot write, a key without contacts scopes cannot read', async () => {
  const reader = await createApiKey(world.tenantId, { scopes: ['contacts:read'] });
  const asReader = { authorization: `Bearer ${reader.key}` };
  const denied = await put({ email: 'r@example.com' }, asReader);
  assert.is(denied.statusCode, 403);
  assert.is(denied.json().code, 'INSUFFICIENT_SCOPE');
  assert.is((await ctx.app.inject({ method: 'GET', url: '/contacts', headers: asReader })).statusCode, 200);

  const sender = await createApiKey(world.tenantId, { scopes: ['email:send'] });
  const res = await ctx.app.inject({
    method: 'GET',
    url: '/contacts',
    headers: { authorization: `Bearer ${sender.key}` },
  });
  assert.is(res.statusCode, 403);
  assert.is(res.json().code, 'INSUFFICIENT_SCOPE');
  const tagsDenied = await ctx.app.inject({
    method: 'POST',
    url: '/contact-tags',
    headers: asReader,
    payload: { name: 'x' },
  });
  assert.is(tagsDenied.statusCode, 403);
});

test('JWT: a viewer reads but cannot write; a non-member gets 403', async () => {
  const viewer = await createAdmin(ctx.app);
  await addMember(world.tenantId, viewer.id, 'viewer');
  const asViewer = { authorization: `Bearer ${viewer.token}`, 'x-tenant-id': world.tenantId };
  assert.is((await ctx.app.inject({ method: 'GET', url: '/contacts', headers: asViewer })).statusCode, 200);
  assert.is((await put({ email: 'v@example.com' }, asViewer)).statusCode, 403);
  assert.is((await put({ email: 'owner-made@example.com' }, world.asOwner)).statusCode, 200);

  const stranger = await createAdmin(ctx.app);
  const res = await ctx.app.inject({
    method: 'GET',
    url: '/contacts',
    headers: { authorization: `Bearer ${stranger.token}`, 'x-tenant-id': world.tenantId },
  });
  assert.is(res.statusCode, 403);
});

test("another tenant never sees, changes or erases this tenant's contacts", async () => {
  const mine = (await put({ email: 'private@example.com', externalId: 'priv-1' })).json();
  const other = await createWorld(ctx.app);
  for (const ref of [mine.id, 'priv-1']) {
    assert.is((await ctx.app.inject({ method: 'GET', url: `/contacts/${ref}`, headers: other.asKey })).statusCode, 404);
    assert.is(
      (
        await ctx.app.inject({
          method: 'PATCH',
          url: `/contacts/${ref}`,
          headers: other.asKey,
          payload: { firstName: 'x' },
        })
      ).statusCode,
      404,
    );
    assert.is(
      (await ctx.app.inject({ method: 'DELETE', url: `/contacts/${ref}`, headers: other.asKey })).statusCode,
      404,
    );
    assert.is(
      (
        await ctx.app.inject({
          method: 'POST',
          url: `/contacts/${ref}/tags`,
          headers: other.asKey,
          payload: { tags: ['x'] },
        })
      ).statusCode,
      404,
    );
  }
  const list = (await ctx.app.inject({ method: 'GET', url: '/contacts', headers: other.asKey })).json();
  assert.is(list.meta.total, 0);
  const sameAddress = await put({ email: 'private@example.com', externalId: 'priv-1' }, other.asKey);
  assert.is(sameAddress.statusCode, 200, 'uniqueness is per tenant');
  assert.is.not(sameAddress.json().id, mine.id);
  const mismatch = await ctx.app.inject({
    method: 'GET',
    url: '/contacts',
    headers: { ...world.asKey, 'x-tenant-id': other.tenantId },
  });
  assert.is(mismatch.statusCode, 403);
});

test('GET /contacts/:idOrExternalId and PATCH /contacts/:id', async () => {
  const c = (await put({ email: 'pat@example.com', externalId: 'pat-1', firstName: 'Pat', locale: 'es' })).json();
  const byId = await ctx.app.inject({ method: 'GET', url: `/contacts/${c.id}`, headers: world.asKey });
  assert.is(byId.json().externalId, 'pat-1');
  const byExternal = await ctx.app.inject({ method: 'GET', url: '/contacts/pat-1', headers: world.asKey });
  assert.is(byExternal.json().id, c.id);
  assert.is(
    (await ctx.app.inject({ method: 'GET', url: '/contacts/nobody', headers: world.asKey })).json().code,
    'NOT_FOUND',
  );

  const patched = await ctx.app.inject({
    method: 'PATCH',
    url: `/contacts/${c.id}`,
    headers: world.asKey,
    payload: { firstName: null, optIn: true, attributes: { a: 1 } },
  });
  assert.is(patched.statusCode, 200);
  assert.is(patched.json().firstName, null);
  assert.is(patched.json().optIn, true);
  assert.ok(patched.json().updatedAt > c.updatedAt);
  const [row] = await rows<{ first_name: string | null; opt_in: boolean }>(
    'SELECT first_name, opt_in FROM contacts WHERE id = :id',
    { id: c.id },
  );
  assert.equal(row, { first_name: null, opt_in: true });

  assert.is(
    (await ctx.app.inject({ method: 'PATCH', url: `/contacts/${c.id}`, headers: world.asKey, payload: {} })).statusCode,
    400,
  );
  const clash = await ctx.app.inject({
    method: 'PATCH',
    url: `/contacts/${c.id}`,
    headers: world.asKey,
    payload: { email: 'other@example.com' },
  });
  assert.is(clash.statusCode, 409);
});

test('tags on a contact: add, remove, and the tag catalogue', async () => {
  const c = (await put({ email: 'tagged@example.com', externalId: 'tagged' })).json();
  const added = await ctx.app.inject({
    method: 'POST',
    url: '/contacts/tagged/tags',
    headers: world.asKey,
    payload: { tags: ['news', 'launch'] },
  });
  assert.is(added.statusCode, 200);
  assert.equal(added.json().tags, ['launch', 'news']);
  const bad = await ctx.app.inject({
    method: 'POST',
    url: '/contacts/tagged/tags',
    headers: world.asKey,
    payload: { tags: ['-nope'] },
  });
  assert.is(bad.statusCode, 400);
  const removed = await ctx.app.inject({ method: 'DELETE', url: `/contacts/${c.id}/tags/news`, headers: world.asKey });
  assert.equal(removed.json().tags, ['launch']);
  const again = await ctx.app.inject({ method: 'DELETE', url: `/contacts/${c.id}/tags/news`, headers: world.asKey });
  assert.is(again.statusCode, 200);
  const tooLong = await ctx.app.inject({
    method: 'DELETE',
    url: `/contacts/${c.id}/tags/${'a'.repeat(51)}`,
    headers: world.asKey,
  });
  assert.is(tooLong.statusCode, 400);

  const created = await ctx.app.inject({
    method: 'POST',
    url: '/contact-tags',
    headers: world.asKey,
    payload: { name: 'empty', description: 'nobody yet' },
  });
  assert.is(created.statusCode, 201);
  assert.equal(
    { ...created.json(), createdAt: 0, updatedAt: 0 },
    { name: 'empty', description: 'nobody yet', contacts: 0, createdAt: 0, updatedAt: 0 },
  );
  const dup = await ctx.app.inject({
    method: 'POST',
    url: '/contact-tags',
    headers: world.asKey,
    payload: { name: 'empty' },
  });
  assert.is(dup.statusCode, 409);
  assert.is(dup.json().code, 'CONTACT_TAG_EXISTS');

  const list = (await ctx.app.inject({ method: 'GET', url: '/contact-tags', headers: world.asKey })).json();
  const launch = list.data.find((t: { name: string }) => t.name === 'launch');
  assert.is(launch.contacts, 1);

  const renamed = await ctx.app.inject({
    method: 'PATCH',
    url: '/contact-tags/launch',
    headers: world.asKey,
    payload: { name: 'launch-2026', description: 'spring' },
  });
  assert.is(renamed.statusCode, 200);
  assert.is(renamed.json().name, 'launch-2026');
  assert.is(renamed.json().contacts, 1, 'links follow a rename');
  const contact = (await ctx.app.inject({ method: 'GET', url: `/contacts/${c.id}`, headers: world.asKey })).json();
  assert.equal(contact.tags, ['launch-2026']);
  const renameClash = await ctx.app.inject({
    method: 'PATCH',
    url: '/contact-tags/launch-2026',
    headers: world.asKey,
    payload: { name: 'empty' },
  });
  assert.is(renameClash.statusCode, 409);
  assert.is(
    (
      await ctx.app.inject({
        method: 'PATCH',
        url: '/contact-tags/ghost',
        headers: world.asKey,
        payload: { description: 'x' },
      })
    ).statusCode,
    404,
  );

  const deleted = await ctx.app.inject({ method: 'DELETE', url: '/contact-tags/launch-2026', headers: world.asKey });
  assert.equal(deleted.json(), { ok: true });
  const after = (await ctx.app.inject({ method: 'GET', url: `/contacts/${c.id}`, headers: world.asKey })).json();
  assert.equal(after.tags, []);
  // Its links are deleted with it (a statement trigger since migration 0477, no longer a foreign key).
  assert.equal(await rows('SELECT tag_id FROM contact_tag_links WHERE contact_id = :id', { id: c.id }), []);
  assert.is(
    (await ctx.app.inject({ method: 'DELETE', url: '/contact-tags/launch-2026', headers: world.asKey })).statusCode,
    404,
  );

  const other = await createWorld(ctx.app);
  const otherTags = (await ctx.app.inject({ method: 'GET', url: '/contact-tags', headers: other.asKey })).json();
  assert.equal(otherTags.data, []);
  assert.is(
    (await ctx.app.inject({ method: 'DELETE', url: '/contact-tags/empty', headers: other.asKey })).statusCode,
    404,
  );
});

test('DELETE /contacts/:externalId erases the row and its tag links', async () => {
  const c = (await put({ email: 'gone@example.com', externalId: 'gone-1', tags: ['vip'] })).json();
  const res = await ctx.app.inject({ method: 'DELETE', url: '/contacts/gone-1', headers: world.asKey });
  assert.is(res.statusCode, 200);
  assert.equal(res.json(), { id: c.id, erased: true });
  assert.equal(await rows('SELECT id FROM contacts WHERE id = :id', { id: c.id }), []);
  assert.equal(await rows('SELECT contact_id FROM contact_tag_links WHERE contact_id = :id', { id: c.id }), []);
  const audit = await rows<{ action: string; target: string; api_key_id: string }>(
    `SELECT action, target, api_key_id FROM audit_events WHERE target = :id`,
    { id: c.id },
  );
  assert.equal(audit, [{ action: 'contact.erased', target: c.id, api_key_id: world.key.id }]);
  assert.is(
    (await ctx.app.inject({ method: 'DELETE', url: '/contacts/gone-1', headers: world.asKey })).statusCode,
    404,
  );
  const byId = (await put({ email: 'gone2@example.com' })).json();
  assert.is(
    (await ctx.app.inject({ method: 'DELETE', url: `/contacts/${byId.id}`, headers: world.asKey })).statusCode,
    200,
  );
});

test('POST /contacts/bulk answers per row and keeps good rows when others fail', async () => {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/contacts/bulk',
    headers: world.asKey,
    payload: {
      contacts: [
        { email: 'bulk1@example.com', externalId: 'b1', tags: ['bulk'] },
        { email: 'broken' },
        { email: 'bulk1@example.com', firstName: 'Again' },
        { email: 'other@example.com', externalId: 'zzz' },
        'not an object',
        { email: 'bulk2@example.com', locale: 'fr', optIn: true },
      ],
    },
  });
  assert.is(res.statusCode, 200);
  const body = res.json();
  assert.is(body.created, 2);
  assert.is(body.updated, 1);
  assert.is(body.failed, 3);
  assert.equal(
    body.results.map((r: { index: number; status: string }) => [r.index, r.status]),
    [
      [0, 'created'],
      [1, 'error'],
      [2, 'updated'],
      [3, 'error'],
      [4, 'error'],
      [5, 'created'],
    ],
  );
  assert.match(body.results[1].error, /email/);
  assert.match(body.results[3].error, /other@example.com/);
  assert.is(body.results[2].id, body.results[0].id);
  const [row] = await rows<{ first_name: string; external_id: string }>(
    'SELECT first_name, external_id FROM contacts WHERE id = :id',
    { id: body.results[0].id },
  );
  assert.equal(row, { first_name: 'Again', external_id: 'b1' });
  assert.equal(
    await rows('SELECT id FROM contacts WHERE tenant_id = :t AND external_id = :e', { t: world.tenantId, e: 'zzz' }),
    [],
  );

  const tooMany = await ctx.app.inject({
    method: 'POST',
    url: '/contacts/bulk',
    headers: world.asKey,
    payload: { contacts: Array.from({ length: 1001 }, (_, i) => ({ email: `x${i}@example.com` })) },
  });
  assert.is(tooMany.statusCode, 400);
  const empty = await ctx.app.inject({
    method: 'POST',
    url: '/contacts/bulk',
    headers: world.asKey,
    payload: { contacts: [] },
  });
  assert.is(empty.statusCode, 400);
});

test('GET /contacts filters and walks to the end with the cursor', async () => {
  const t = await createWorld(ctx.app);
  const rowsIn = Array.from({ length: 7 }, (_, i) => ({
    email: `walk${i}@example.com`,
    locale: i % 2 === 0 ? 'en' : 'de',
    optIn: i < 3,
    tags: i < 4 ? ['walk'] : [],
  }));
  const bulk = await ctx.app.inject({
    method: 'POST',
    url: '/contacts/bulk',
    headers: t.asKey,
    payload: { contacts: rowsIn },
  });
  assert.is(bulk.json().created, 7);

  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query: string = cursor ? `limit=3&cursor=${encodeURIComponent(cursor)}` : 'limit=3';
    const page = await ctx.app.inject({ method: 'GET', url: `/contacts?${query}`, headers: t.asKey });
    const body = page.json();
    assert.is(page.statusCode, 200, JSON.stringify(body));
    assert.is(body.meta.total, 7);
    assert.is(body.meta.totalPages, 3);
    seen.push(...body.data.map((c: { email: string }) => c.email));
    cursor = body.meta.nextCursor;
    pages += 1;
  } while (cursor && pages < 10);
  assert.is(pages, 3);
  assert.is(seen.length, 7);
  assert.is(new Set(seen).size, 7);

  const byPage = (await ctx.app.inject({ method: 'GET', url: '/contacts?page=3&limit=3', headers: t.asKey })).json();
  assert.is(byPage.data.length, 1);
  assert.is(byPage.meta.nextCursor, null);

  const de = (await ctx.app.inject({ method: 'GET', url: '/contacts?locale=de', headers: t.asKey })).json();
  assert.is(de.meta.total, 3);
  const optedIn = (await ctx.app.inject({ method: 'GET', url: '/contacts?optIn=true', headers: t.asKey })).json();
  assert.is(optedIn.meta.total, 3);
  const tagged = (
    await ctx.app.inject({ method: 'GET', url: '/contacts?tag=walk&optIn=false', headers: t.asKey })
  ).json();
  assert.equal(
    tagged.data.map((c: { email: string }) => c.email),
    ['walk3@example.com'],
  );

  // `since` is later than every write above: the clock has moved past the millisecond this line began in.
  const lastWrite = Date.now();
  await waitFor('the clock to pass the last write', () => Date.now() > lastWrite, { intervalMs: 1 });
  const since = new Date().toISOString();
  await ctx.app.inject({
    method: 'PUT',
    url: '/contacts',
    headers: t.asKey,
    payload: { email: 'walk5@example.com', firstName: 'Changed' },
  });
  const changed = (
    await ctx.app.inject({
      method: 'GET',
      url: `/contacts?updatedSince=${encodeURIComponent(since)}`,
      headers: t.asKey,
    })
  ).json();
  assert.equal(
    changed.data.map((c: { email: string }) => c.email),
    ['walk5@example.com'],
  );

  const badCursor = await ctx.app.inject({ method: 'GET', url: '/contacts?cursor=garbage', headers: t.asKey });
  assert.is(badCursor.statusCode, 400);
  assert.is(badCursor.json().code, 'VALIDATION_FAILED');
  for (const q of [
    'limit=501',
    'page=0',
    'tag=' + 'a'.repeat(51),
    'tag=Bad',
    'updatedSince=yesterday',
    'projectId=nope',
  ]) {
    const res = await ctx.app.inject({ method: 'GET', url: `/contacts?${q}`, headers: t.asKey });
    assert.is(res.statusCode, 400, q);
  }
  const defaults = (await ctx.app.inject({ method: 'GET', url: '/contacts', headers: t.asKey })).json();
  assert.is(defaults.meta.limit, 50);
});

test('projectId is stored and filters the list', async () => {
  const projectId = '7a1f3c1e-5b7e-4a43-9d0c-6f1b2a3c4d5e';
  const c = (await put({ email: 'proj@example.com', projectId })).json();
  assert.is(c.projectId, projectId);
  const list = (
    await ctx.app.inject({ method: 'GET', url: `/contacts?projectId=${projectId}`, headers: world.asKey })
  ).json();
  assert.equal(
    list.data.map((x: { id: string }) => x.id),
    [c.id],
  );
});

test.run();
