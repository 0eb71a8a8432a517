// Tenants and members: create/list/get/update/delete, roles, the last owner, block/unblock,
// resume-sending and the audit log, checked in the database.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { addMember, createAdmin, createApiKey, type AdminFixture } from './helpers/fixtures.ts';
import { Membership, Tenant } from '../daemon/modules/tenants/model.ts';
import { AuditEvent } from '../daemon/modules/audit/model.ts';

let ctx: TestContext;
let owner: AdminFixture;
let stranger: AdminFixture;
let platform: AdminFixture;
let tenantId = '';

test.before(async () => {
  ctx = await createTestContext();
  owner = await createAdmin(ctx.app, { email: 'owner@example.test' });
  stranger = await createAdmin(ctx.app, { email: 'stranger@example.test' });
  platform = await createAdmin(ctx.app, { email: 'root@example.test', platformAdmin: true });
});
test.after(async () => {
  await ctx?.close();
});

const as = (admin: AdminFixture) => ({ authorization: `Bearer ${admin.token}` });

test('create: 201, creator is owner, plan free; audited', async () => {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/tenants',
    headers: as(owner),
    payload: { name: ' Acme ' },
  });
  assert.is(res.statusCode, 201);
  const body = res.json();
  tenantId = body.id;
  assert.is(body.name, 'Acme');
  assert.is(body.plan, 'free');
  assert.is(body.status, 'active');
  assert.is(body.role, 'owner');
  assert.type(body.createdAt, 'string');
  const membership = await Membership.findOne({ where: { tenantId, adminId: owner.id } });
  assert.is(membership!.role, 'owner');
  assert.is(await AuditEvent.count({ where: { tenantId, action: 'tenant.created' } }), 1);
  const bad = await ctx.app.inject({ method: 'POST', url: '/tenants', headers: as(owner), payload: { name: '' } });
  assert.is(bad.statusCode, 400);
  assert.is(bad.json().code, 'VALIDATION_FAILED');
});

test("list shows only the admin's tenants, paginated", async () => {
  await ctx.app.inject({ method: 'POST', url: '/tenants', headers: as(owner), payload: { name: 'Second' } });
  await ctx.app.inject({ method: 'POST', url: '/tenants', headers: as(stranger), payload: { name: 'Not yours' } });
  const page1 = await ctx.app.inject({ method: 'GET', url: '/tenants?limit=1', headers: as(owner) });
  assert.is(page1.statusCode, 200);
  assert.equal(page1.json().meta, { page: 1, limit: 1, total: 2, totalPages: 2 });
  assert.is(page1.json().data[0].name, 'Acme');
  const page2 = await ctx.app.inject({ method: 'GET', url: '/tenants?limit=1&page=2', headers: as(owner) });
  assert.is(page2.json().data[0].name, 'Second');
  const all = await ctx.app.inject({ method: 'GET', url: '/tenants', headers: as(owner) });
  assert.not.ok(all.json().data.some((t: { name: string }) => t.name === 'Not yours'));
  const badLimit = await ctx.app.inject({ method: 'GET', url: '/tenants?limit=101', headers: as(owner) });
  assert.is(badLimit.statusCode, 400);
});

test('get: members see it, strangers get 403, platform admins may read; API keys get 403', async () => {
  assert.is(
    (await ctx.app.inject({ method: 'GET', url: `/tenants/${tenantId}`, headers: as(owner) })).json().name,
    'Acme',
  );
  const strangerRes = await ctx.app.inject({ method: 'GET', url: `/tenants/${tenantId}`, headers: as(stranger) });
  assert.is(strangerRes.statusCode, 403);
  assert.is(strangerRes.json().code, 'NOT_A_MEMBER');
  const missing = await ctx.app.inject({
    method: 'GET',
    url: '/tenants/00000000-0000-4000-8000-000000000000',
    headers: as(stranger),
  });
  assert.is(missing.statusCode, 403, 'no difference between missing and foreign');
  const root = await ctx.app.inject({ method: 'GET', url: `/tenants/${tenantId}`, headers: as(platform) });
  assert.is(root.statusCode, 200);
  assert.is(root.json().role, null);
  const key = await createApiKey(tenantId);
  const byKey = await ctx.app.inject({
    method: 'GET',
    url: `/tenants/${tenantId}`,
    headers: { authorization: `Bearer ${key.key}` },
  });
  assert.is(byKey.statusCode, 403);
  assert.is(byKey.json().code, 'SESSION_REQUIRED');
  const badId = await ctx.app.inject({ method: 'GET', url: '/tenants/not-a-uuid', headers: as(owner) });
  assert.is(badId.statusCode, 400);
});

test('update: owners rename; plan and monthlyLimit only from platform admins', async () => {
  const rename = await ctx.app.inject({
    method: 'PATCH',
    url: `/tenants/${tenantId}`,
    headers: as(owner),
    payload: { name: 'Acme Inc' },
  });
  assert.is(rename.statusCode, 200);
  assert.is((await Tenant.findByPk(tenantId))!.name, 'Acme Inc');
  const plan = await ctx.app.inject({
    method: 'PATCH',
    url: `/tenants/${tenantId}`,
    headers: as(owner),
    payload: { plan: 'pro' },
  });
  assert.is(plan.statusCode, 403);
  assert.is(plan.json().code, 'PLATFORM_ADMIN_REQUIRED');
  const root = await ctx.app.inject({
    method: 'PATCH',
    url: `/tenants/${tenantId}`,
    headers: as(platform),
    payload: { plan: 'pro', monthlyLimit: 777 },
  });
  assert.is(root.statusCode, 200);
  let row = await Tenant.findByPk(tenantId);
  assert.is(row!.plan, 'pro');
  assert.is(row!.monthlyLimit, 777);
  const clear = await ctx.app.inject({
    method: 'PATCH',
    url: `/tenants/${tenantId}`,
    headers: as(platform),
    payload: { monthlyLimit: null },
  });
  assert.is(clear.statusCode, 200);
  row = await Tenant.findByPk(tenantId);
  assert.is(row!.monthlyLimit, null);
  const rootRename = await ctx.app.inject({
    method: 'PATCH',
    url: `/tenants/${tenantId}`,
    headers: as(platform),
    payload: { name: 'Hijack' },
  });
  assert.is(rootRename.statusCode, 403, 'renaming is for members');
  const badPlan = await ctx.app.inject({
    method: 'PATCH',
    url: `/tenants/${tenantId}`,
    headers: as(platform),
    payload: { plan: 'gold' },
  });
  assert.is(badPlan.statusCode, 400);
  const empty = await ctx.app.inject({ method: 'PATCH', url: `/tenants/${tenantId}`, headers: as(owner), payload: {} });
  assert.is(empty.statusCode, 400);
});

test('members: invite by e-mail (must exist), list, roles enforced, duplicates 409', async () => {
  const dev = await createAdmin(ctx.app, { email: 'dev@example.test' });
  const viewer = await createAdmin(ctx.app, { email: 'viewer@example.test' });
  const invite = await ctx.app.inject({
    method: 'POST',
    url: `/tenants/${tenantId}/members`,
    headers: as(owner),
    payload: { email: 'DEV@example.test', role: 'developer' },
  });
  assert.is(invite.statusCode, 201);
  assert.is(invite.json().adminId, dev.id);
  assert.is(invite.json().role, 'developer');
  await addMember(tenantId, viewer.id, 'viewer');
  const unknown = await ctx.app.inject({
    method: 'POST',
    url: `/tenants/${tenantId}/members`,
    headers: as(owner),
    payload: { email: 'nobody@example.test', role: 'viewer' },
  });
  // An address with no account gets an invitation (test/invitations.test.ts follows it through).
  assert.is(unknown.statusCode, 202, unknown.body);
  assert.equal(
    { email: unknown.json().email, role: unknown.json().role },
    { email: 'nobody@example.test', role: 'viewer' },
  );
  const dup = await ctx.app.inject({
    method: 'POST',
    url: `/tenants/${tenantId}/members`,
    headers: as(owner),
    payload: { email: 'dev@example.test', role: 'viewer' },
  });
  assert.is(dup.statusCode, 409);
  const badRole = await ctx.app.inject({
    method: 'POST',
    url: `/tenants/${tenantId}/members`,
    headers: as(owner),
    payload: { email: 'dev@example.test', role: 'god' },
  });
  assert.is(badRole.statusCode, 400);
  const byDev = await ctx.app.inject({
    method: 'POST',
    url: `/tenants/${tenantId}/members`,
    headers: as(dev),
    payload: { email: 'stranger@example.test', role: 'viewer' },
  });
  assert.is(byDev.statusCode, 403);
  assert.is(byDev.json().code, 'ROLE_REQUIRED');

  const list = await ctx.app.inject({
    method: 'GET',
    url: `/tenants/${tenantId}/members?limit=2`,
    headers: as(viewer),
  });
  assert.is(list.statusCode, 200);
  assert.equal(list.json().meta, { page: 1, limit: 2, total: 3, totalPages: 2 });
  assert.is(list.json().data[0].email, 'owner@example.test');
  const rename = await ctx.app.inject({
    method: 'PATCH',
    url: `/tenants/${tenantId}`,
    headers: as(viewer),
    payload: { name: 'x' },
  });
  assert.is(rename.statusCode, 403, 'viewers read only');
  assert.is(await AuditEvent.count({ where: { tenantId, action: 'member.added' } }), 1);
});

test('roles: admins manage members but not owners; the last owner cannot be demoted or leave (409)', async () => {
  const boss = await createAdmin(ctx.app, { email: 'boss@example.test' });
  await addMember(tenantId, boss.id, 'admin');
  const dev = (await Membership.findOne({ where: { tenantId, role: 'developer' } }))!;
  const promote = await ctx.app.inject({
    method: 'PATCH',
    url: `/tenants/${tenantId}/members/${dev.adminId}/role`,
    headers: as(boss),
    payload: { role: 'admin' },
  });
  assert.is(promote.statusCode, 200);
  assert.is((await Membership.findOne({ where: { tenantId, adminId: dev.adminId } }))!.role, 'admin');
  const makeOwner = await ctx.app.inject({
    method: 'PATCH',
    url: `/tenants/${tenantId}/members/${dev.adminId}/role`,
    headers: as(boss),
    payload: { role: 'owner' },
  });
  assert.is(makeOwner.statusCode, 403);
  const demoteOwner = await ctx.app.inject({
    method: 'PATCH',
    url: `/tenants/${tenantId}/members/${owner.id}/role`,
    headers: as(boss),
    payload: { role: 'viewer' },
  });
  assert.is(demoteOwner.statusCode, 403);

  const selfDemote = await ctx.app.inject({
    method: 'PATCH',
    url: `/tenants/${tenantId}/members/${owner.id}/role`,
    headers: as(owner),
    payload: { role: 'admin' },
  });
  assert.is(selfDemote.statusCode, 409);
  assert.is(selfDemote.json().code, 'LAST_OWNER');
  const leave = await ctx.app.inject({
    method: 'DELETE',
    url: `/tenants/${tenantId}/members/${owner.id}`,
    headers: as(owner),
  });
  assert.is(leave.statusCode, 409);
  assert.is((await Membership.findOne({ where: { tenantId, adminId: owner.id } }))!.role, 'owner');

  const second = await ctx.app.inject({
    method: 'PATCH',
    url: `/tenants/${tenantId}/members/${boss.id}/role`,
    headers: as(owner),
    payload: { role: 'owner' },
  });
  assert.is(second.statusCode, 200);
  const nowLeave = await ctx.app.inject({
    method: 'DELETE',
    url: `/tenants/${tenantId}/members/${boss.id}`,
    headers: as(boss),
  });
  assert.is(nowLeave.statusCode, 200);
  assert.is(await Membership.count({ where: { tenantId, adminId: boss.id } }), 0);
  const gone = await ctx.app.inject({
    method: 'DELETE',
    url: `/tenants/${tenantId}/members/${boss.id}`,
    headers: as(owner),
  });
  assert.is(gone.statusCode, 404);
  const removeDev = await ctx.app.inject({
    method: 'DELETE',
    url: `/tenants/${tenantId}/members/${dev.adminId}`,
    headers: as(owner),
  });
  assert.is(removeDev.statusCode, 200);
  assert.ok((await AuditEvent.count({ where: { tenantId, action: 'member.removed' } })) >= 2);
  assert.ok((await AuditEvent.count({ where: { tenantId, action: 'member.role_changed' } })) >= 2);
});

test('block: platform admins only; members then get 403 with a sentence, keys too; unblock restores', async () => {
  const key = await createApiKey(tenantId, { scopes: ['email:read'] });
  const asKey = { authorization: `Bearer ${key.key}` };
  // A key route of another area: whatever it answers, it must not be 403 before the block.
  const before = await ctx.app.inject({ method: 'GET', url: '/emails/logs', headers: asKey });
  assert.is.not(before.statusCode, 403);
  const byOwner = await ctx.app.inject({ method: 'POST', url: `/tenants/${tenantId}/block`, headers: as(owner) });
  assert.is(byOwner.statusCode, 403);
  assert.is(byOwner.json().code, 'PLATFORM_ADMIN_REQUIRED');
  const block = await ctx.app.inject({ method: 'POST', url: `/tenants/${tenantId}/block`, headers: as(platform) });
  assert.is(block.statusCode, 200);
  assert.is(block.json().status, 'blocked');
  assert.is((await Tenant.findByPk(tenantId))!.status, 'blocked');

  const keyAfter = await ctx.app.inject({ method: 'GET', url: '/emails/logs', headers: asKey });
  assert.is(keyAfter.statusCode, 403);
  assert.is(keyAfter.json().code, 'TENANT_BLOCKED');
  assert.match(keyAfter.json().message, /blocked/);
  const session = await ctx.app.inject({
    method: 'GET',
    url: '/emails/logs',
    headers: { ...as(owner), 'x-tenant-id': tenantId },
  });
  assert.is(session.statusCode, 403);
  assert.is(session.json().code, 'TENANT_BLOCKED');
  const createKey = await ctx.app.inject({
    method: 'POST',
    url: `/tenants/${tenantId}/api-keys`,
    headers: as(owner),
    payload: { name: 'k', scopes: ['email:send'] },
  });
  assert.is(createKey.statusCode, 403);
  assert.is(createKey.json().code, 'TENANT_BLOCKED');
  const read = await ctx.app.inject({ method: 'GET', url: `/tenants/${tenantId}`, headers: as(owner) });
  assert.is(read.json().status, 'blocked', 'members can still see why');

  const unblock = await ctx.app.inject({ method: 'POST', url: `/tenants/${tenantId}/unblock`, headers: as(platform) });
  assert.is(unblock.json().status, 'active');
  assert.is.not((await ctx.app.inject({ method: 'GET', url: '/emails/logs', headers: asKey })).statusCode, 403);
  const missing = await ctx.app.inject({
    method: 'POST',
    url: '/tenants/00000000-0000-4000-8000-000000000000/block',
    headers: as(platform),
  });
  assert.is(missing.statusCode, 404);
  assert.is(await AuditEvent.count({ where: { tenantId, action: 'tenant.blocked' } }), 1);
});

test('resume-sending clears the pause (owners and admins)', async () => {
  await Tenant.update(
    { sendingPausedAt: new Date(), sendingPausedReason: 'bounce rate 7 %' },
    { where: { id: tenantId } },
  );
  const developer = await createAdmin(ctx.app);
  await addMember(tenantId, developer.id, 'developer');
  const denied = await ctx.app.inject({
    method: 'POST',
    url: `/tenants/${tenantId}/resume-sending`,
    headers: as(developer),
  });
  assert.is(denied.statusCode, 403);
  const ok = await ctx.app.inject({ method: 'POST', url: `/tenants/${tenantId}/resume-sending`, headers: as(owner) });
  assert.is(ok.statusCode, 200);
  assert.is(ok.json().sendingPausedAt, null);
  const row = await Tenant.findByPk(tenantId);
  assert.is(row!.sendingPausedAt, null);
  assert.is(row!.sendingPausedReason, null);
});

test("audit events: owners read the tenant log (with members' sign-ins); others 403", async () => {
  await AuditEvent.create({ action: 'auth.login', adminId: owner.id });
  await AuditEvent.create({ action: 'auth.login', adminId: stranger.id });
  const res = await ctx.app.inject({
    method: 'GET',
    url: `/tenants/${tenantId}/audit-events?limit=100`,
    headers: as(owner),
  });
  assert.is(res.statusCode, 200);
  const actions = res.json().data.map((e: { action: string }) => e.action);
  assert.ok(actions.includes('tenant.created'));
  assert.ok(actions.includes('tenant.blocked'));
  assert.ok(actions.includes('auth.login'));
  assert.not.ok(res.json().data.some((e: { adminId: string }) => e.adminId === stranger.id));
  const developer = (await Membership.findOne({ where: { tenantId, role: 'developer' } }))!;
  const developerToken = ctx.app.jwt.sign({ sub: developer.adminId, typ: 'access', pa: false });
  const byDeveloper = await ctx.app.inject({
    method: 'GET',
    url: `/tenants/${tenantId}/audit-events`,
    headers: { authorization: `Bearer ${developerToken}` },
  });
  assert.is(byDeveloper.statusCode, 403);
  const byStranger = await ctx.app.inject({
    method: 'GET',
    url: `/tenants/${tenantId}/audit-events`,
    headers: as(stranger),
  });
  assert.is(byStranger.statusCode, 403);
});

test('delete: owners only; cascades memberships and keys', async () => {
  const other = await ctx.app.inject({
    method: 'POST',
    url: '/tenants',
    headers: as(owner),
    payload: { name: 'Doomed' },
  });
  const id = other.json().id;
  const member = await createAdmin(ctx.app);
  await addMember(id, member.id, 'admin');
  const key = await createApiKey(id);
  const byAdmin = await ctx.app.inject({ method: 'DELETE', url: `/tenants/${id}`, headers: as(member) });
  assert.is(byAdmin.statusCode, 403);
  const ok = await ctx.app.inject({ method: 'DELETE', url: `/tenants/${id}`, headers: as(owner) });
  assert.is(ok.statusCode, 200);
  assert.is(await Tenant.count({ where: { id } }), 0);
  assert.is(await Membership.count({ where: { tenantId: id } }), 0);
  const keyRes = await ctx.app.inject({
    method: 'GET',
    url: '/emails/logs',
    headers: { authorization: `Bearer ${key.key}` },
  });
  assert.is(keyRes.statusCode, 401);
});

test.run();
