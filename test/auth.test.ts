// Registration, sign-in, refresh rotation with reuse detection, logout, change-password, /auth/me,
// and the refusal of forged tokens.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHmac } from 'node:crypto';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { Admin, RefreshToken } from '../daemon/modules/auth/model.ts';
import { AuditEvent } from '../daemon/modules/audit/model.ts';
import { PlatformSetting } from '../daemon/modules/platform/model.ts';
import { hashToken, pruneExpiredAuthTokens } from '../daemon/modules/auth/tokens.ts';
import { AuthToken } from '../daemon/modules/auth/model.ts';

let ctx: TestContext;
test.before(async () => {
  ctx = await createTestContext({ env: { AUTH_RATE_LIMIT_MAX: '1000' } });
});
test.after(async () => {
  await ctx?.close();
});

const PASSWORD = 'correct horse battery';

async function register(email: string, password = PASSWORD, name?: string) {
  return ctx.app.inject({
    method: 'POST',
    url: '/auth/register',
    payload: { email, password, ...(name ? { name } : {}) },
  });
}
async function login(email: string, password = PASSWORD) {
  return ctx.app.inject({ method: 'POST', url: '/auth/login', payload: { email, password } });
}
function bearer(token: string) {
  return { authorization: `Bearer ${token}` };
}

test('registration-status before any admin: open, no admins', async () => {
  const res = await ctx.app.inject({ method: 'GET', url: '/auth/registration-status' });
  assert.is(res.statusCode, 200);
  assert.equal(res.json(), { open: true, hasAdmins: false });
});

test('the first admin becomes platform admin; the password is stored as an scrypt hash', async () => {
  const res = await register('First@Example.test', PASSWORD, 'Ada');
  assert.is(res.statusCode, 201);
  const body = res.json();
  assert.equal(Object.keys(body), ['admin']);
  assert.is(body.admin.email, 'first@example.test');
  assert.is(body.admin.name, 'Ada');
  assert.is(body.admin.emailVerified, false);
  const row = await Admin.findByPk(body.admin.id);
  assert.ok(row!.isPlatformAdmin);
  assert.match(row!.passwordHash, /^scrypt\$17\$8\$1\$/);
  assert.not.ok(row!.passwordHash.includes(PASSWORD));
  const second = await register('second@example.test');
  assert.is(second.statusCode, 201);
  assert.not.ok((await Admin.findByPk(second.json().admin.id))!.isPlatformAdmin);
  const audit = await AuditEvent.count({ where: { action: 'auth.registered' } });
  assert.is(audit, 2);
});

test('register: short password, bad address and duplicates are refused', async () => {
  const short = await register('short@example.test', 'short');
  assert.is(short.statusCode, 400);
  assert.is(short.json().code, 'VALIDATION_FAILED');
  assert.ok(short.json().details.some((d: { field: string }) => d.field.includes('password')));
  const bad = await register('not-an-address');
  assert.is(bad.statusCode, 400);
  const dup = await register('FIRST@example.test');
  assert.is(dup.statusCode, 409);
  assert.is(dup.json().code, 'EMAIL_TAKEN');
});

test('registration can be closed by the platform setting (403 with a sentence)', async () => {
  await PlatformSetting.upsert({ key: 'registrationOpen', value: false });
  const status = await ctx.app.inject({ method: 'GET', url: '/auth/registration-status' });
  assert.equal(status.json(), { open: false, hasAdmins: true });
  const res = await register('late@example.test');
  assert.is(res.statusCode, 403);
  assert.is(res.json().code, 'REGISTRATION_CLOSED');
  assert.match(res.json().message, /closed/);
  assert.is(await Admin.count({ where: { email: 'late@example.test' } }), 0);
  await PlatformSetting.upsert({ key: 'registrationOpen', value: true });
});

test('login: tokens; unknown user and wrong password get the same 401 and are audited', async () => {
  const ok = await login('first@example.test');
  assert.is(ok.statusCode, 200);
  const body = ok.json();
  assert.type(body.accessToken, 'string');
  assert.type(body.refreshToken, 'string');
  assert.is(body.expiresIn, 900);
  const row = await RefreshToken.findOne({ where: { tokenHash: hashToken(body.refreshToken) } });
  assert.ok(row, 'refresh token stored by hash');
  assert.is(await RefreshToken.count({ where: { tokenHash: body.refreshToken } }), 0, 'never in clear');
  const claims = ctx.app.jwt.decode<{ sub: string; typ: string; pa: boolean; exp: number; iat: number }>(
    body.accessToken,
  )!;
  assert.is(claims.typ, 'access');
  assert.is(claims.pa, true);
  assert.is(claims.exp - claims.iat, 900);

  const wrong = await login('first@example.test', 'wrong password!!');
  const unknown = await login('nobody@example.test', 'wrong password!!');
  assert.is(wrong.statusCode, 401);
  assert.is(unknown.statusCode, 401);
  assert.equal(wrong.json(), unknown.json());
  assert.ok((await AuditEvent.count({ where: { action: 'auth.login_failed' } })) >= 2);
  assert.ok((await AuditEvent.count({ where: { action: 'auth.login' } })) >= 1);
});

test('/auth/me answers the admin; no token is 401', async () => {
  const { accessToken } = (await login('first@example.test')).json();
  const me = await ctx.app.inject({ method: 'GET', url: '/auth/me', headers: bearer(accessToken) });
  assert.is(me.statusCode, 200);
  assert.is(me.json().email, 'first@example.test');
  assert.is(me.json().isPlatformAdmin, true);
  assert.equal(me.json().tenants, []);
  const none = await ctx.app.inject({ method: 'GET', url: '/auth/me' });
  assert.is(none.statusCode, 401);
  assert.is(none.json().code, 'UNAUTHORIZED');
});

test('refresh rotates: the old token dies; reusing it revokes the whole family', async () => {
  const first = (await login('second@example.test')).json();
  const r1 = await ctx.app.inject({
    method: 'POST',
    url: '/auth/refresh',
    payload: { refreshToken: first.refreshToken },
  });
  assert.is(r1.statusCode, 200);
  const second = r1.json();
  assert.is.not(second.refreshToken, first.refreshToken);
  const oldRow = await RefreshToken.findOne({ where: { tokenHash: hashToken(first.refreshToken) } });
  const newRow = await RefreshToken.findOne({ where: { tokenHash: hashToken(second.refreshToken) } });
  assert.ok(oldRow!.revokedAt);
  assert.is(oldRow!.replacedBy, newRow!.id);
  assert.is(oldRow!.familyId, newRow!.familyId);
  // An unrelated sign-in of the same admin survives the reuse.
  const other = (await login('second@example.test')).json();

  const reuse = await ctx.app.inject({
    method: 'POST',
    url: '/auth/refresh',
    payload: { refreshToken: first.refreshToken },
  });
  assert.is(reuse.statusCode, 401);
  assert.is(reuse.json().code, 'INVALID_REFRESH_TOKEN');
  assert.match(reuse.json().message, /already used/);
  await newRow!.reload();
  assert.ok(newRow!.revokedAt, 'the live token of the family was revoked');
  const afterReuse = await ctx.app.inject({
    method: 'POST',
    url: '/auth/refresh',
    payload: { refreshToken: second.refreshToken },
  });
  assert.is(afterReuse.statusCode, 401);
  const otherRefresh = await ctx.app.inject({
    method: 'POST',
    url: '/auth/refresh',
    payload: { refreshToken: other.refreshToken },
  });
  assert.is(otherRefresh.statusCode, 200);
  assert.ok((await AuditEvent.count({ where: { action: 'auth.refresh_reuse' } })) >= 1);

  const garbage = await ctx.app.inject({
    method: 'POST',
    url: '/auth/refresh',
    payload: { refreshToken: 'x'.repeat(43) },
  });
  assert.is(garbage.statusCode, 401);
  const missing = await ctx.app.inject({ method: 'POST', url: '/auth/refresh', payload: {} });
  assert.is(missing.statusCode, 400);
});

test('logout revokes only this sign-in; logout-all revokes every one', async () => {
  const a = (await login('second@example.test')).json();
  const b = (await login('second@example.test')).json();
  const out = await ctx.app.inject({ method: 'POST', url: '/auth/logout', headers: bearer(a.accessToken) });
  assert.is(out.statusCode, 200);
  assert.is(out.json().revokedSessions, 1);
  assert.ok((await RefreshToken.findOne({ where: { tokenHash: hashToken(a.refreshToken) } }))!.revokedAt);
  assert.is((await RefreshToken.findOne({ where: { tokenHash: hashToken(b.refreshToken) } }))!.revokedAt, null);
  const refreshA = await ctx.app.inject({
    method: 'POST',
    url: '/auth/refresh',
    payload: { refreshToken: a.refreshToken },
  });
  assert.is(refreshA.statusCode, 401);
  const meA = await ctx.app.inject({ method: 'GET', url: '/auth/me', headers: bearer(a.accessToken) });
  assert.is(meA.statusCode, 401, 'the access token of an ended sign-in stops working at once');
  assert.match(meA.json().message, /ended/);
  assert.is((await ctx.app.inject({ method: 'GET', url: '/auth/me', headers: bearer(b.accessToken) })).statusCode, 200);

  const all = await ctx.app.inject({ method: 'POST', url: '/auth/logout-all', headers: bearer(b.accessToken) });
  assert.is(all.statusCode, 200);
  const admin = await Admin.findOne({ where: { email: 'second@example.test' } });
  assert.is(await RefreshToken.count({ where: { adminId: admin!.id, revokedAt: null } }), 0);
});

test('change-password: wrong current password 403; keeps this session, revokes the others', async () => {
  await register('changer@example.test');
  const keep = (await login('changer@example.test')).json();
  const other = (await login('changer@example.test')).json();
  const wrong = await ctx.app.inject({
    method: 'POST',
    url: '/auth/change-password',
    headers: bearer(keep.accessToken),
    payload: { currentPassword: 'not the password', newPassword: 'a brand new password' },
  });
  assert.is(wrong.statusCode, 403);
  assert.is(wrong.json().code, 'WRONG_PASSWORD');
  const short = await ctx.app.inject({
    method: 'POST',
    url: '/auth/change-password',
    headers: bearer(keep.accessToken),
    payload: { currentPassword: PASSWORD, newPassword: 'short' },
  });
  assert.is(short.statusCode, 400);
  const ok = await ctx.app.inject({
    method: 'POST',
    url: '/auth/change-password',
    headers: bearer(keep.accessToken),
    payload: { currentPassword: PASSWORD, newPassword: 'a brand new password' },
  });
  assert.is(ok.statusCode, 200);
  assert.is(ok.json().revokedSessions, 1);
  assert.is(
    (await ctx.app.inject({ method: 'POST', url: '/auth/refresh', payload: { refreshToken: other.refreshToken } }))
      .statusCode,
    401,
  );
  assert.is(
    (await ctx.app.inject({ method: 'GET', url: '/auth/me', headers: bearer(other.accessToken) })).statusCode,
    401,
  );
  assert.is(
    (await ctx.app.inject({ method: 'GET', url: '/auth/me', headers: bearer(keep.accessToken) })).statusCode,
    200,
  );
  assert.is(
    (await ctx.app.inject({ method: 'POST', url: '/auth/refresh', payload: { refreshToken: keep.refreshToken } }))
      .statusCode,
    200,
  );
  assert.is((await login('changer@example.test')).statusCode, 401);
  assert.is((await login('changer@example.test', 'a brand new password')).statusCode, 200);
  assert.is(await AuditEvent.count({ where: { action: 'auth.password_changed' } }), 1);
});

test('tokens with alg none, another secret, or an API-key look are refused with 401', async () => {
  const admin = await Admin.findOne({ where: { email: 'first@example.test' } });
  const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const payload = b64({ sub: admin!.id, typ: 'access', pa: true, iat: now, exp: now + 600 });
  const none = `${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`;
  const header = b64({ alg: 'HS256', typ: 'JWT' });
  const forged = `${header}.${payload}.${createHmac('sha256', 'another secret that is long enough!!').update(`${header}.${payload}`).digest('base64url')}`;
  const hs512Header = b64({ alg: 'HS512', typ: 'JWT' });
  const otherAlg = `${hs512Header}.${payload}.${createHmac('sha512', ctx.deps.secrets.jwtSecret).update(`${hs512Header}.${payload}`).digest('base64url')}`;
  for (const token of [none, forged, otherAlg, 'svc_live_notakey']) {
    const res = await ctx.app.inject({ method: 'GET', url: '/auth/me', headers: bearer(token) });
    assert.is(res.statusCode, 401, token.slice(0, 20));
    assert.is(res.json().error, 'Unauthorized');
  }
  const expired = ctx.app.jwt.sign({ sub: admin!.id, typ: 'access', pa: true }, { expiresIn: -10 });
  const res = await ctx.app.inject({ method: 'GET', url: '/auth/me', headers: bearer(expired) });
  assert.is(res.statusCode, 401);
  assert.match(res.json().message, /expired/);
});

test('maintenance prunes tokens a day past their expiry and keeps the rest', async () => {
  const admin = await Admin.findOne({ where: { email: 'first@example.test' } });
  const old = new Date(Date.now() - 2 * 86_400_000);
  await AuthToken.create({ adminId: admin!.id, purpose: 'reset-password', tokenHash: 'old-one-time', expiresAt: old });
  await RefreshToken.create({ adminId: admin!.id, familyId: admin!.id, tokenHash: 'old-refresh', expiresAt: old });
  const liveRefresh = await RefreshToken.count({ where: { adminId: admin!.id } });
  await pruneExpiredAuthTokens(ctx.db.sequelize);
  assert.is(await AuthToken.count({ where: { tokenHash: 'old-one-time' } }), 0);
  assert.is(await RefreshToken.count({ where: { tokenHash: 'old-refresh' } }), 0);
  assert.is(await RefreshToken.count({ where: { adminId: admin!.id } }), liveRefresh - 1);
});

test.run();
