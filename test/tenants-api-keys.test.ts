// API keys: created once-shown and stored hashed, scopes checked, listed without secrets,
// rotated (old secret dead at once), revoked, lastUsedAt written; roles enforced.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { addMember, createAdmin, createTenant, type AdminFixture } from './helpers/fixtures.ts';
import { ApiKey } from '../daemon/modules/tenants/model.ts';
import { AuditEvent } from '../daemon/modules/audit/model.ts';
import { hashApiKey } from '../daemon/modules/auth/api-key-format.ts';
import { waitFor } from './helpers/wait.ts';

let ctx: TestContext;
let owner: AdminFixture;
let viewer: AdminFixture;
let developer: AdminFixture;
let tenantId = '';
const as = (admin: AdminFixture) => ({ authorization: `Bearer ${admin.token}` });

test.before(async () => {
  ctx = await createTestContext();
  owner = await createAdmin(ctx.app);
  viewer = await createAdmin(ctx.app);
  developer = await createAdmin(ctx.app);
  tenantId = await createTenant(owner.id);
  await addMember(tenantId, viewer.id, 'viewer');
  await addMember(tenantId, developer.id, 'developer');
});
test.after(async () => {
  await ctx?.close();
});

/** Any route that takes an API key and answers 2xx/501 for a valid one: /auth is public, so use a tenant route of another area. */
async function keyWorks(key: string): Promise<number> {
  const res = await ctx.app.inject({ method: 'GET', url: '/emails/logs', headers: { authorization: `Bearer ${key}` } });
  return res.statusCode;
}

let created: { id: string; key: string; prefix: string } = { id: '', key: '', prefix: '' };

test('create: 201 with the key once; only its hash is stored; audited', async () => {
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/tenants/${tenantId}/api-keys`,
    headers: as(developer),
    payload: { name: 'CI', scopes: ['email:send', 'email:read'], environment: 'test' },
  });
  assert.is(res.statusCode, 201);
  const body = res.json();
  created = body;
  assert.match(body.key, /^svc_test_[A-Za-z0-9]{52}$/);
  assert.ok(body.key.startsWith(body.prefix));
  assert.equal(body.scopes, ['email:send', 'email:read']);
  assert.is(body.environment, 'test');
  assert.is(body.createdBy, developer.id);
  const row = await ApiKey.findByPk(body.id);
  assert.is(row!.keyHash, hashApiKey(body.key));
  assert.not.ok(JSON.stringify(row!.toJSON()).includes(body.key));
  assert.is(await AuditEvent.count({ where: { tenantId, action: 'api_key.created', target: body.id } }), 1);
  const live = await ctx.app.inject({
    method: 'POST',
    url: `/tenants/${tenantId}/api-keys`,
    headers: as(owner),
    payload: { name: 'prod', scopes: ['email:send'] },
  });
  assert.match(live.json().key, /^svc_live_/, 'live by default');
});

test('create: unknown scopes, empty scopes and viewers are refused', async () => {
  const unknown = await ctx.app.inject({
    method: 'POST',
    url: `/tenants/${tenantId}/api-keys`,
    headers: as(owner),
    payload: { name: 'x', scopes: ['email:send', 'root:all'] },
  });
  assert.is(unknown.statusCode, 400);
  assert.is(unknown.json().code, 'VALIDATION_FAILED');
  const empty = await ctx.app.inject({
    method: 'POST',
    url: `/tenants/${tenantId}/api-keys`,
    headers: as(owner),
    payload: { name: 'x', scopes: [] },
  });
  assert.is(empty.statusCode, 400);
  const env = await ctx.app.inject({
    method: 'POST',
    url: `/tenants/${tenantId}/api-keys`,
    headers: as(owner),
    payload: { name: 'x', scopes: ['email:send'], environment: 'prod' },
  });
  assert.is(env.statusCode, 400);
  const byViewer = await ctx.app.inject({
    method: 'POST',
    url: `/tenants/${tenantId}/api-keys`,
    headers: as(viewer),
    payload: { name: 'x', scopes: ['email:send'] },
  });
  assert.is(byViewer.statusCode, 403);
  assert.is(byViewer.json().code, 'ROLE_REQUIRED');
});

test('list: viewers may read; never the key or its hash; paginated', async () => {
  const res = await ctx.app.inject({
    method: 'GET',
    url: `/tenants/${tenantId}/api-keys?limit=1`,
    headers: as(viewer),
  });
  assert.is(res.statusCode, 200);
  assert.equal(res.json().meta, { page: 1, limit: 1, total: 2, totalPages: 2 });
  const all = await ctx.app.inject({ method: 'GET', url: `/tenants/${tenantId}/api-keys`, headers: as(viewer) });
  const text = all.body;
  assert.not.ok(text.includes(created.key));
  assert.not.ok(text.includes('keyHash'));
  assert.not.ok(all.json().data.some((k: Record<string, unknown>) => 'key' in k));
});

test('lastUsedAt is written when the key is used', async () => {
  assert.is.not(await keyWorks(created.key), 401);
  await waitFor('lastUsedAt to be written', async () => Boolean((await ApiKey.findByPk(created.id))!.lastUsedAt), {
    timeoutMs: 1_000,
  });
  assert.ok((await ApiKey.findByPk(created.id))!.lastUsedAt);
});

test('rotate: same id and scopes, new secret; the old one is dead at once', async () => {
  assert.is.not(await keyWorks(created.key), 401);
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/tenants/${tenantId}/api-keys/${created.id}/rotate`,
    headers: as(developer),
  });
  assert.is(res.statusCode, 201);
  const body = res.json();
  assert.is(body.id, created.id);
  assert.equal(body.scopes, ['email:send', 'email:read']);
  assert.is.not(body.key, created.key);
  assert.is(await keyWorks(created.key), 401);
  assert.is.not(await keyWorks(body.key), 401);
  assert.is((await ApiKey.findByPk(created.id))!.keyHash, hashApiKey(body.key));
  assert.is(await AuditEvent.count({ where: { tenantId, action: 'api_key.rotated' } }), 1);
  created = body;
});

test("revoke: the key dies, leaves the list, and cannot be revoked twice; other tenants' ids are 404", async () => {
  const byViewer = await ctx.app.inject({
    method: 'DELETE',
    url: `/tenants/${tenantId}/api-keys/${created.id}`,
    headers: as(viewer),
  });
  assert.is(byViewer.statusCode, 403);
  const res = await ctx.app.inject({
    method: 'DELETE',
    url: `/tenants/${tenantId}/api-keys/${created.id}`,
    headers: as(owner),
  });
  assert.is(res.statusCode, 200);
  assert.ok((await ApiKey.findByPk(created.id))!.revokedAt);
  assert.is(await keyWorks(created.key), 401);
  const list = await ctx.app.inject({ method: 'GET', url: `/tenants/${tenantId}/api-keys`, headers: as(owner) });
  assert.not.ok(list.json().data.some((k: { id: string }) => k.id === created.id));
  const twice = await ctx.app.inject({
    method: 'DELETE',
    url: `/tenants/${tenantId}/api-keys/${created.id}`,
    headers: as(owner),
  });
  assert.is(twice.statusCode, 404);
  const rotateDead = await ctx.app.inject({
    method: 'POST',
    url: `/tenants/${tenantId}/api-keys/${created.id}/rotate`,
    headers: as(owner),
  });
  assert.is(rotateDead.statusCode, 404);

  const otherOwner = await createAdmin(ctx.app);
  const otherTenant = await createTenant(otherOwner.id);
  const theirs = await ctx.app.inject({
    method: 'POST',
    url: `/tenants/${otherTenant}/api-keys`,
    headers: as(otherOwner),
    payload: { name: 'theirs', scopes: ['email:send'] },
  });
  const cross = await ctx.app.inject({
    method: 'DELETE',
    url: `/tenants/${tenantId}/api-keys/${theirs.json().id}`,
    headers: as(owner),
  });
  assert.is(cross.statusCode, 404, 'a key of another tenant is not found through this tenant');
  assert.is((await ApiKey.findByPk(theirs.json().id))!.revokedAt, null);
  assert.is(await AuditEvent.count({ where: { tenantId, action: 'api_key.revoked' } }), 1);
});

test.run();
