// TOTP two-factor: enrolment, sealed secrets, the login challenge, single-use codes (no replay),
// disable with a code, and wrong codes counting against the auth rate limit.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { TotpClock } from './helpers/totp-clock.ts';
import { Admin, AuthToken } from '../daemon/modules/auth/model.ts';
import { AuditEvent } from '../daemon/modules/audit/model.ts';
import { hashToken } from '../daemon/modules/auth/tokens.ts';
import { unseal } from '../daemon/crypto/sealed.ts';

let ctx: TestContext;
test.before(async () => {
  ctx = await createTestContext({ env: { AUTH_RATE_LIMIT_MAX: '1000' } });
});
test.after(async () => {
  await ctx?.close();
});

const EMAIL = 'two@example.test';
const PASSWORD = 'correct horse battery';
let accessToken = '';
let secret = '';
// The app (in this process) reads Date.now for the TOTP step: pinned 1 s into a step, the file stays in it
// instead of waiting for the next step (it runs in well under the 29 s left).
const clock = new TotpClock();
test.before(() => clock.pin());
test.after(() => clock.restore());

/** A code of the step `offset` steps from the pinned one. */
const code = (offset: number): string => clock.code(secret, offset);
const auth = () => ({ authorization: `Bearer ${accessToken}` });

test('setup: register and sign in', async () => {
  assert.is(
    (await ctx.app.inject({ method: 'POST', url: '/auth/register', payload: { email: EMAIL, password: PASSWORD } }))
      .statusCode,
    201,
  );
  const login = await ctx.app.inject({
    method: 'POST',
    url: '/auth/login',
    payload: { email: EMAIL, password: PASSWORD },
  });
  accessToken = login.json().accessToken;
  assert.ok(accessToken);
});

test('enable gives a secret and otpauth URL; the pending secret is sealed at rest; status pending', async () => {
  const res = await ctx.app.inject({ method: 'POST', url: '/auth/2fa/enable', headers: auth() });
  assert.is(res.statusCode, 200);
  secret = res.json().secret;
  assert.match(secret, /^[A-Z2-7]+$/);
  assert.match(res.json().otpauthUrl, /^otpauth:\/\/totp\/.*secret=[A-Z2-7]+/);
  const admin = await Admin.findOne({ where: { email: EMAIL } });
  assert.is(admin!.totpEnabled, false);
  assert.not.ok(admin!.totpPendingSecret!.includes(secret));
  assert.is(unseal(ctx.deps.secrets.encryptionKey, admin!.totpPendingSecret!), secret);
  const status = await ctx.app.inject({ method: 'GET', url: '/auth/2fa/status', headers: auth() });
  assert.equal(status.json(), { enabled: false, pending: true });
});

test('verify: a wrong code is 400 and audited; a right code turns 2FA on and records its step', async () => {
  const wrong = await ctx.app.inject({
    method: 'POST',
    url: '/auth/2fa/verify',
    headers: auth(),
    payload: { code: '000000' === code(-1) ? '111111' : '000000' },
  });
  assert.is(wrong.statusCode, 400);
  assert.is(wrong.json().code, 'INVALID_TWO_FACTOR_CODE');
  assert.ok(wrong.headers['x-ratelimit-remaining'] !== undefined, 'counted by the auth limiter');
  const malformed = await ctx.app.inject({
    method: 'POST',
    url: '/auth/2fa/verify',
    headers: auth(),
    payload: { code: '12ab' },
  });
  assert.is(malformed.statusCode, 400);
  assert.is(malformed.json().code, 'VALIDATION_FAILED');
  const ok = await ctx.app.inject({
    method: 'POST',
    url: '/auth/2fa/verify',
    headers: auth(),
    payload: { code: code(-1) },
  });
  assert.is(ok.statusCode, 200);
  const admin = await Admin.findOne({ where: { email: EMAIL } });
  assert.is(admin!.totpEnabled, true);
  assert.is(admin!.totpPendingSecret, null);
  assert.is(unseal(ctx.deps.secrets.encryptionKey, admin!.totpSecret!), secret);
  assert.is(Number(admin!.totpLastStep), clock.step - 1);
  assert.is(await AuditEvent.count({ where: { action: 'auth.2fa_enabled' } }), 1);
  assert.ok((await AuditEvent.count({ where: { action: 'auth.2fa_failed' } })) >= 1);
  const again = await ctx.app.inject({ method: 'POST', url: '/auth/2fa/enable', headers: auth() });
  assert.is(again.statusCode, 409);
});

test('login with 2FA on answers a challenge (stored hashed); the used code is refused (no replay)', async () => {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/auth/login',
    payload: { email: EMAIL, password: PASSWORD },
  });
  assert.is(res.statusCode, 200);
  const body = res.json();
  assert.equal(Object.keys(body).sort(), ['challengeToken', 'twoFactorRequired']);
  assert.is(body.twoFactorRequired, true);
  const row = await AuthToken.findOne({ where: { tokenHash: hashToken(body.challengeToken) } });
  assert.is(row!.purpose, 'login-challenge');
  assert.ok(row!.expiresAt.getTime() - Date.now() <= 5 * 60_000);
  assert.is(await AuthToken.count({ where: { tokenHash: body.challengeToken } }), 0);

  const replay = await ctx.app.inject({
    method: 'POST',
    url: '/auth/login/verify-2fa',
    payload: { challengeToken: body.challengeToken, code: code(-1) },
  });
  assert.is(replay.statusCode, 401);
  assert.is(replay.json().code, 'INVALID_TWO_FACTOR_CODE');
  assert.ok(replay.headers['x-ratelimit-remaining'] !== undefined);

  const ok = await ctx.app.inject({
    method: 'POST',
    url: '/auth/login/verify-2fa',
    payload: { challengeToken: body.challengeToken, code: code(0) },
  });
  assert.is(ok.statusCode, 200);
  assert.type(ok.json().accessToken, 'string');
  assert.type(ok.json().refreshToken, 'string');
  const admin = await Admin.findOne({ where: { email: EMAIL } });
  assert.is(Number(admin!.totpLastStep), clock.step);

  const challengeAgain = await ctx.app.inject({
    method: 'POST',
    url: '/auth/login/verify-2fa',
    payload: { challengeToken: body.challengeToken, code: code(1) },
  });
  assert.is(challengeAgain.statusCode, 401);
  assert.is(challengeAgain.json().code, 'INVALID_CHALLENGE');
  const unknown = await ctx.app.inject({
    method: 'POST',
    url: '/auth/login/verify-2fa',
    payload: { challengeToken: 'y'.repeat(43), code: code(1) },
  });
  assert.is(unknown.statusCode, 401);
});

test('an expired challenge is refused', async () => {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/auth/login',
    payload: { email: EMAIL, password: PASSWORD },
  });
  const challengeToken = res.json().challengeToken;
  await AuthToken.update(
    { expiresAt: new Date(Date.now() - 1000) },
    { where: { tokenHash: hashToken(challengeToken) } },
  );
  const late = await ctx.app.inject({
    method: 'POST',
    url: '/auth/login/verify-2fa',
    payload: { challengeToken, code: code(1) },
  });
  assert.is(late.statusCode, 401);
  assert.is(late.json().code, 'INVALID_CHALLENGE');
});

test('a challenge dies after 5 wrong codes, even with a right one after', async () => {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/auth/login',
    payload: { email: EMAIL, password: PASSWORD },
  });
  const challengeToken = res.json().challengeToken;
  const wrong = ['000000', '111111', '222222', '333333', '444444', '555555', '666666']
    .filter((c) => c !== code(1) && c !== code(0) && c !== code(2))
    .slice(0, 5);
  for (const guess of wrong) {
    const attempt = await ctx.app.inject({
      method: 'POST',
      url: '/auth/login/verify-2fa',
      payload: { challengeToken, code: guess },
    });
    assert.is(attempt.statusCode, 401);
  }
  const row = await AuthToken.findOne({ where: { tokenHash: hashToken(challengeToken) } });
  assert.is(row!.attempts, 5);
  assert.ok(row!.usedAt);
  const right = await ctx.app.inject({
    method: 'POST',
    url: '/auth/login/verify-2fa',
    payload: { challengeToken, code: code(1) },
  });
  assert.is(right.statusCode, 401);
  assert.is(right.json().code, 'INVALID_CHALLENGE');
});

test('disable needs a fresh valid code; an old one is refused', async () => {
  const old = await ctx.app.inject({
    method: 'POST',
    url: '/auth/2fa/disable',
    headers: auth(),
    payload: { code: code(0) },
  });
  assert.is(old.statusCode, 400);
  assert.ok((await Admin.findOne({ where: { email: EMAIL } }))!.totpEnabled);
  const ok = await ctx.app.inject({
    method: 'POST',
    url: '/auth/2fa/disable',
    headers: auth(),
    payload: { code: code(1) },
  });
  assert.is(ok.statusCode, 200);
  const admin = await Admin.findOne({ where: { email: EMAIL } });
  assert.is(admin!.totpEnabled, false);
  assert.is(admin!.totpSecret, null);
  assert.is(await AuditEvent.count({ where: { action: 'auth.2fa_disabled' } }), 1);
  const status = await ctx.app.inject({ method: 'GET', url: '/auth/2fa/status', headers: auth() });
  assert.equal(status.json(), { enabled: false, pending: false });
  const login = await ctx.app.inject({
    method: 'POST',
    url: '/auth/login',
    payload: { email: EMAIL, password: PASSWORD },
  });
  assert.type(login.json().accessToken, 'string');
  const notOn = await ctx.app.inject({
    method: 'POST',
    url: '/auth/2fa/disable',
    headers: auth(),
    payload: { code: code(1) },
  });
  assert.is(notOn.statusCode, 409);
});

test('2FA routes need a session: API-key-looking and missing tokens are 401', async () => {
  const res = await ctx.app.inject({ method: 'POST', url: '/auth/2fa/enable' });
  assert.is(res.statusCode, 401);
});

test.run();
