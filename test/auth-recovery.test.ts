// Password reset and e-mail verification: localised mail through the service's own mail path
// (captured), links from PUBLIC_URL, single-use hashed tokens, sessions ended, 2FA kept.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { simpleParser } from 'mailparser';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { Admin, AuthToken, RefreshToken } from '../daemon/modules/auth/model.ts';
import { hashToken } from '../daemon/modules/auth/tokens.ts';
import { latestCapturedMessageTo } from '../daemon/mail/system-mail.ts';
import { seal } from '../daemon/crypto/sealed.ts';
import { pickMailLocale } from '../daemon/modules/auth/mails.ts';
import { runJobs } from './helpers/send-jobs.ts';

const PUBLIC_URL = 'https://mail.example.test';
let ctx: TestContext;
test.before(async () => {
  ctx = await createTestContext({ env: { PUBLIC_URL, AUTH_RATE_LIMIT_MAX: '1000' } });
});
test.after(async () => {
  await ctx?.close();
});

const EMAIL = 'forgetful@example.test';
const PASSWORD = 'correct horse battery';

async function capturedCount(): Promise<number> {
  // System mail waits on the durable queue until its worker (run here) delivers it.
  await runJobs(ctx, 'system');
  const rows = await ctx.db.sequelize.query<{ n: string }>('SELECT count(*) AS n FROM captured_messages', {
    type: QueryTypes.SELECT,
  });
  return Number(rows[0].n);
}

async function latestMail(address: string) {
  await runJobs(ctx, 'system');
  const message = await latestCapturedMessageTo(ctx.db.sequelize, address);
  assert.ok(message, `a mail to ${address} was captured`);
  const parsed = await simpleParser(message!.raw);
  const link = /https?:\/\/\S+\?token=([A-Za-z0-9_-]+)/.exec(parsed.text ?? '');
  assert.ok(link, 'the mail has a link with a token');
  return {
    subject: parsed.subject ?? '',
    text: parsed.text ?? '',
    html: String(parsed.html),
    url: link![0],
    token: link![1],
    id: message!.id,
  };
}

test('accept-language picks es or en by quality, English by default', () => {
  assert.is(pickMailLocale('es-ES,es;q=0.9,en;q=0.8'), 'es');
  assert.is(pickMailLocale('fr-FR, en;q=0.5, es;q=0.7'), 'es');
  assert.is(pickMailLocale('de'), 'en');
  assert.is(pickMailLocale(undefined), 'en');
  assert.is(pickMailLocale('es;q=0, en'), 'en');
});

test('registration mails a verification link (English by default) built from PUBLIC_URL, not Host', async () => {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/auth/register',
    headers: { host: 'evil.example.org' },
    payload: { email: EMAIL, password: PASSWORD },
  });
  assert.is(res.statusCode, 201);
  const mail = await latestMail(EMAIL);
  assert.is(mail.subject, 'Confirm your e-mail address');
  assert.ok(mail.url.startsWith(`${PUBLIC_URL}/verify-email?token=`), mail.url);
  assert.not.ok(mail.text.includes('evil.example.org'));
  const row = await AuthToken.findOne({ where: { tokenHash: hashToken(mail.token) } });
  assert.is(row!.purpose, 'verify-email');
  assert.ok(Math.abs(row!.expiresAt.getTime() - Date.now() - 48 * 3600_000) < 60_000);
  assert.is(await AuthToken.count({ where: { tokenHash: mail.token } }), 0, 'never stored in clear');

  const ok = await ctx.app.inject({ method: 'POST', url: '/auth/verify-email', payload: { token: mail.token } });
  assert.is(ok.statusCode, 200);
  assert.ok((await Admin.findOne({ where: { email: EMAIL } }))!.emailVerifiedAt);
  const again = await ctx.app.inject({ method: 'POST', url: '/auth/verify-email', payload: { token: mail.token } });
  assert.is(again.statusCode, 400);
  assert.is(again.json().code, 'INVALID_TOKEN');
});

test('resend-verification-email: Spanish mail for an unverified address; 200 and no mail for unknown or verified', async () => {
  // An unverified account as a fixture row: this test is about the mail, not the password (no scrypt hash).
  await Admin.create({ email: 'nuevo@example.test', passwordHash: 'fixture-has-no-password', emailVerifiedAt: null });
  const before = await capturedCount();
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/auth/resend-verification-email',
    headers: { 'accept-language': 'es' },
    payload: { email: 'nuevo@example.test' },
  });
  assert.is(res.statusCode, 200);
  const mail = await latestMail('nuevo@example.test');
  assert.is(mail.subject, 'Confirma tu dirección de correo');
  assert.match(mail.text, /caduca en 48 horas/);
  assert.is(await capturedCount(), before + 1);
  for (const email of ['ghost@example.test', EMAIL]) {
    const quiet = await ctx.app.inject({ method: 'POST', url: '/auth/resend-verification-email', payload: { email } });
    assert.is(quiet.statusCode, 200);
  }
  assert.is(await capturedCount(), before + 1);
});

test('resend-verification (session) tells when already verified', async () => {
  // An access token as createAdmin signs one: this test is about the answer, not the sign-in.
  const admin = await Admin.findOne({ where: { email: EMAIL } });
  const accessToken = ctx.app.jwt.sign({ sub: admin!.id, typ: 'access', pa: admin!.isPlatformAdmin });
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/auth/resend-verification',
    headers: { authorization: `Bearer ${accessToken}` },
  });
  assert.is(res.statusCode, 200);
  assert.equal(res.json(), { ok: true, alreadyVerified: true });
});

test('forgot-password: 200 either way; Spanish or English mail only when the account exists; header required', async () => {
  const before = await capturedCount();
  const ghost = await ctx.app.inject({
    method: 'POST',
    url: '/auth/forgot-password',
    headers: { 'accept-language': 'es' },
    payload: { email: 'ghost@example.test' },
  });
  assert.is(ghost.statusCode, 200);
  assert.equal(ghost.json(), { ok: true });
  assert.is(await capturedCount(), before);

  const es = await ctx.app.inject({
    method: 'POST',
    url: '/auth/forgot-password',
    headers: { 'accept-language': 'es-ES,es;q=0.9' },
    payload: { email: EMAIL },
  });
  assert.equal(es.json(), ghost.json());
  const mailEs = await latestMail(EMAIL);
  assert.is(mailEs.subject, 'Restablece tu contraseña');
  assert.match(mailEs.html, /lang="es"/);
  assert.ok(mailEs.url.startsWith(`${PUBLIC_URL}/reset-password?token=`));

  const en = await ctx.app.inject({
    method: 'POST',
    url: '/auth/forgot-password',
    headers: { 'accept-language': 'en-GB' },
    payload: { email: EMAIL },
  });
  assert.is(en.statusCode, 200);
  const mailEn = await latestMail(EMAIL);
  assert.is(mailEn.subject, 'Reset your password');
  assert.match(mailEn.text, /expires in 1 hour/);
  // The newer link replaces the older one.
  const olderRow = await AuthToken.findOne({ where: { tokenHash: hashToken(mailEs.token) } });
  assert.ok(olderRow!.usedAt);

  const noHeader = await ctx.app.inject({ method: 'POST', url: '/auth/forgot-password', payload: { email: EMAIL } });
  assert.is(noHeader.statusCode, 400);
});

test('reset-password: single use, ends sessions, keeps 2FA on; expired tokens are refused', async () => {
  const admin = await Admin.findOne({ where: { email: EMAIL } });
  const session = (
    await ctx.app.inject({ method: 'POST', url: '/auth/login', payload: { email: EMAIL, password: PASSWORD } })
  ).json();
  await admin!.update({ totpEnabled: true, totpSecret: seal(ctx.deps.secrets.encryptionKey, 'JBSWY3DPEHPK3PXP') });

  const mail = await latestMail(EMAIL);
  const short = await ctx.app.inject({
    method: 'POST',
    url: '/auth/reset-password',
    payload: { token: mail.token, newPassword: 'short' },
  });
  assert.is(short.statusCode, 400);
  const ok = await ctx.app.inject({
    method: 'POST',
    url: '/auth/reset-password',
    payload: { token: mail.token, newPassword: 'a fresh new password' },
  });
  assert.is(ok.statusCode, 200);
  const reused = await ctx.app.inject({
    method: 'POST',
    url: '/auth/reset-password',
    payload: { token: mail.token, newPassword: 'yet another password' },
  });
  assert.is(reused.statusCode, 400);
  assert.is(reused.json().code, 'INVALID_TOKEN');

  await admin!.reload();
  assert.is(admin!.totpEnabled, true, '2FA survives a password reset');
  assert.is(await RefreshToken.count({ where: { adminId: admin!.id, revokedAt: null } }), 0);
  assert.is(
    (await ctx.app.inject({ method: 'POST', url: '/auth/refresh', payload: { refreshToken: session.refreshToken } }))
      .statusCode,
    401,
  );
  const oldPassword = await ctx.app.inject({
    method: 'POST',
    url: '/auth/login',
    payload: { email: EMAIL, password: PASSWORD },
  });
  assert.is(oldPassword.statusCode, 401);
  const login = await ctx.app.inject({
    method: 'POST',
    url: '/auth/login',
    payload: { email: EMAIL, password: 'a fresh new password' },
  });
  assert.is(login.json().twoFactorRequired, true);

  await ctx.app.inject({
    method: 'POST',
    url: '/auth/forgot-password',
    headers: { 'accept-language': 'en' },
    payload: { email: EMAIL },
  });
  const late = await latestMail(EMAIL);
  await AuthToken.update({ expiresAt: new Date(Date.now() - 1000) }, { where: { tokenHash: hashToken(late.token) } });
  const expired = await ctx.app.inject({
    method: 'POST',
    url: '/auth/reset-password',
    payload: { token: late.token, newPassword: 'too late password' },
  });
  assert.is(expired.statusCode, 400);
});

test.run();
