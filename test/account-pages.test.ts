// The account pages at the HTTP level (app.inject): security headers and CSP on every page, the
// CSRF guard (cookie + signed field bound to the link and form), bad input answered with the form
// and a 4xx, dead links, POST-redirect-GET, languages, and the pages' absence from /openapi.json.
// The flows in a real browser are in account-pages-browser.test.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, randomUUID } from 'node:crypto';
import { simpleParser } from 'mailparser';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createAdmin, createTenant } from './helpers/fixtures.ts';
import { Admin } from '../daemon/modules/auth/model.ts';
import { createOneTimeToken } from '../daemon/modules/auth/tokens.ts';
import { hashPassword } from '../daemon/modules/auth/passwords.ts';
import { inviteByEmail } from '../daemon/modules/tenants/invitations.ts';
import { FORM_GUARD_TTL_MS, formGuardHolds, formGuardKey, issueFormGuard } from '../daemon/modules/pages/form-guard.ts';
import { formPostOrigin } from '../daemon/modules/pages/form-origin.ts';
import { runJobs } from './helpers/send-jobs.ts';
import { latestCapturedMessageTo } from '../daemon/mail/system-mail.ts';
import { seal } from '../daemon/crypto/sealed.ts';
import { signLinkToken } from '../daemon/mail/link-tokens.ts';

const PUBLIC_URL = 'https://mail.example.test';
const PASSWORD = 'the password of someone';
let ctx: TestContext;
let admin: Admin;

test.before(async () => {
  ctx = await createTestContext({ env: { PUBLIC_URL, AUTH_RATE_LIMIT_MAX: '1000' } });
  admin = await Admin.create({ email: 'someone@example.test', passwordHash: await hashPassword(PASSWORD) });
});
test.after(async () => {
  await ctx?.close();
});

const get = (url: string, headers: Record<string, string> = {}) => ctx.app.inject({ method: 'GET', url, headers });

function post(url: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return ctx.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: new URLSearchParams(fields).toString(),
  });
}

/** What a browser keeps from a page: its cookie and the form's hidden guard. */
function formOf(res: { headers: Record<string, unknown>; body: string }) {
  const setCookie = String(res.headers['set-cookie'] ?? '');
  const guard = /name="guard" value="([^"]+)"/.exec(res.body);
  assert.ok(guard, 'the form has a guard field');
  return { cookie: setCookie.split(';')[0], guard: guard![1] };
}

const passwordHashNow = async () => (await Admin.findByPk(admin.id))!.passwordHash;

function assertPageHeaders(res: { headers: Record<string, unknown>; body: string }, where: string) {
  const csp = String(res.headers['content-security-policy']);
  for (const directive of ["default-src 'none'", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"])
    assert.ok(csp.includes(directive), `${where}: CSP has ${directive}: ${csp}`);
  assert.not.match(csp, /unsafe-inline|unsafe-eval|\*/, where);
  // The one stylesheet is allowed by its hash; no style attribute, script or outside asset exists.
  const style = /<style>([^<]*)<\/style>/.exec(res.body);
  assert.ok(style, `${where}: one inline stylesheet`);
  const hash = createHash('sha256').update(style![1]).digest('base64');
  assert.ok(csp.includes(`style-src 'sha256-${hash}'`), `${where}: the CSP allows the stylesheet by its hash`);
  assert.not.match(res.body, /<script|\sstyle=|\ssrc=|<link|https?:\/\//i, where);
  assert.is(res.headers['x-frame-options'], 'DENY', where);
  assert.is(res.headers['referrer-policy'], 'same-origin', where);
  assert.is(res.headers['cache-control'], 'no-store', where);
  assert.is(res.headers['x-content-type-options'], 'nosniff', where);
  assert.is(res.headers['content-type'], 'text/html; charset=utf-8', where);
}

test('every page, the unsubscribe page included, has the strict headers and no outside asset', async () => {
  const owner = await createAdmin(ctx.app, { email: 'owner@example.test' });
  const tenantId = await createTenant(owner.id, 'Acme');
  const resetToken = await createOneTimeToken(ctx.db.sequelize, admin.id, 'reset-password');
  const verifyToken = await createOneTimeToken(ctx.db.sequelize, admin.id, 'verify-email');
  const invitation = await ctx.db.sequelize.transaction((transaction) =>
    inviteByEmail({ sequelize: ctx.db.sequelize, config: ctx.config, secrets: ctx.deps.secrets }, transaction, {
      tenantId,
      tenantName: 'Acme',
      email: 'invitee@example.test',
      role: 'developer',
      invitedBy: owner.id,
      inviterEmail: owner.email,
    }),
  );
  assert.ok(invitation.invitationId);
  const unsubscribe = signLinkToken(ctx.deps.secrets.linkSigningKey, {
    k: 'u',
    e: randomUUID(),
    t: tenantId,
    a: 'reader@example.test',
  });
  const pages: Array<[string, number]> = [
    [`/reset-password?token=${resetToken}`, 200],
    [`/verify-email?token=${verifyToken}`, 200],
    ['/register?invitation=not-a-live-invitation-token', 410],
    ['/reset-password', 410],
    ['/reset-password/done', 200],
    ['/verify-email/done?lang=es', 200],
    ['/register/done', 200],
    [`/u/${unsubscribe}`, 200],
  ];
  for (const [url, status] of pages) {
    const res = await get(url);
    assert.is(res.statusCode, status, `${url}: ${res.body}`);
    assertPageHeaders(res, url);
  }
  const cookie = String((await get(`/reset-password?token=${resetToken}`)).headers['set-cookie']);
  assert.match(cookie, /^svc_form_guard=[A-Za-z0-9_-]{32}; Path=\/; Max-Age=3600; HttpOnly; SameSite=Strict; Secure$/);
});

test('the pages are HTML for people, not operations of /openapi.json', async () => {
  const paths = Object.keys((await get('/openapi.json')).json().paths);
  for (const path of ['/reset-password', '/verify-email', '/register', '/reset-password/done'])
    assert.not.ok(paths.includes(path), path);
  assert.ok(paths.includes('/auth/reset-password'), 'the API operations stay documented');
});

test('mail links carry the language of the mail, and the page speaks it; else Accept-Language', async () => {
  await ctx.app.inject({
    method: 'POST',
    url: '/auth/forgot-password',
    headers: { 'accept-language': 'es' },
    payload: { email: admin.email },
  });
  await runJobs(ctx, 'system');
  const mail = await latestCapturedMessageTo(ctx.db.sequelize, admin.email);
  assert.match((await simpleParser(mail!.raw)).text ?? '', /reset-password\?token=[A-Za-z0-9_-]+&lang=es/);

  const token = await createOneTimeToken(ctx.db.sequelize, admin.id, 'reset-password');
  const byLink = await get(`/reset-password?token=${token}&lang=es`, { 'accept-language': 'en' });
  assert.match(byLink.body, /<html lang="es">.*Elige una contraseña nueva/s);
  const byBrowser = await get(`/reset-password?token=${token}`, { 'accept-language': 'fr, es;q=0.8, en;q=0.5' });
  assert.match(byBrowser.body, /Elige una contraseña nueva/);
  const unknownLang = await get(`/reset-password?token=${token}&lang=de`);
  assert.match(unknownLang.body, /<html lang="en">.*Choose a new password/s);
});

test('a POST without the cookie, with another link’s guard, another form’s, or an expired one: 403, nothing changes', async () => {
  const token = await createOneTimeToken(ctx.db.sequelize, admin.id, 'reset-password');
  const page = await get(`/reset-password?token=${token}`);
  const { cookie, guard } = formOf(page);
  const before = await passwordHashNow();
  const fields = { token, guard, password: 'a new password here', repeatedPassword: 'a new password here' };

  const noCookie = await post(`/reset-password?token=${token}`, fields);
  assert.is(noCookie.statusCode, 403);
  assert.match(noCookie.body, /This form expired or did not come from this page/);
  assert.match(noCookie.body, /name="guard" value="\d{13}\.[A-Za-z0-9_-]{43}"/, 'a fresh form comes back');

  const nonce = cookie.split('=')[1];
  const key = formGuardKey(ctx.deps.secrets.linkSigningKey);
  const otherToken = await createOneTimeToken(ctx.db.sequelize, admin.id, 'verify-email');
  const wrongGuards = {
    'another link': issueFormGuard({ key, purpose: 'reset-password', linkToken: otherToken, nonce }),
    'another form': issueFormGuard({ key, purpose: 'verify-email', linkToken: token, nonce }),
    expired: issueFormGuard(
      { key, purpose: 'reset-password', linkToken: token, nonce },
      Date.now() - FORM_GUARD_TTL_MS,
    ),
    tampered: guard.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')),
    'tampered inside': guard.replace(/(?<=\.....)./, (c) => (c === 'A' ? 'B' : 'A')),
    empty: '',
  };
  for (const [what, wrong] of Object.entries(wrongGuards)) {
    const res = await post(`/reset-password?token=${token}`, { ...fields, guard: wrong }, { cookie });
    assert.is(res.statusCode, 403, what);
  }
  const crossSite = await post(`/reset-password?token=${token}`, fields, { cookie, 'sec-fetch-site': 'cross-site' });
  assert.is(crossSite.statusCode, 403);
  assert.match(crossSite.body, /This form did not come from this service/);
  assert.is(crossSite.headers['set-cookie'], undefined, 'a foreign post cannot replace the cookie');
  assert.is(await passwordHashNow(), before, 'the password did not change');

  await Admin.update(
    { totpEnabled: true, totpSecret: seal(ctx.deps.secrets.encryptionKey, 'JBSWY3DPEHPK3PXP') },
    { where: { id: admin.id } },
  );
  const ok = await post(`/reset-password?token=${token}`, fields, { cookie, 'sec-fetch-site': 'same-origin' });
  assert.is(ok.statusCode, 303, ok.body);
  assert.is(ok.headers.location, 'reset-password/done?lang=en', 'relative: it works under a proxy path too');
  const after = (await Admin.findByPk(admin.id))!;
  assert.is.not(after.passwordHash, before);
  assert.is(after.totpEnabled, true, '2FA is untouched by a reset from the page');
  await Admin.update({ totpEnabled: false, totpSecret: null }, { where: { id: admin.id } });
});

test('a POST with a valid cookie and guard from another origin (Origin, else Referer) is refused with 403 saying why; nothing changes', async () => {
  const token = await createOneTimeToken(ctx.db.sequelize, admin.id, 'reset-password');
  const page = await get(`/reset-password?token=${token}`);
  assert.is(page.headers['referrer-policy'], 'same-origin', 'so the browser sends a real Origin to its own page');
  const { cookie, guard } = formOf(page);
  const before = await passwordHashNow();
  const fields = { token, guard, password: 'a password from elsewhere', repeatedPassword: 'a password from elsewhere' };
  const url = `/reset-password?token=${token}`;

  const evil = await post(url, fields, { cookie, origin: 'https://evil.example' });
  assert.is(evil.statusCode, 403, evil.body);
  assert.match(evil.body, /This form did not come from this service/);
  assert.match(
    evil.body,
    /It was sent from https:\/\/evil\.example, not from this service \(https:\/\/mail\.example\.test\)\./,
  );
  assert.not.match(evil.body, /name="guard"/, 'no new form');
  assert.is(evil.headers['set-cookie'], undefined, 'a foreign post cannot replace the cookie');
  const refused: Array<[string, Record<string, string>, RegExp]> = [
    ['Origin: null (a sandboxed frame, a no-referrer page)', { origin: 'null' }, /sent from null,/],
    ['a look-alike host', { origin: 'https://mail.example.test.evil.example' }, /mail\.example\.test\.evil\.example/],
    ['our host over http', { origin: 'http://mail.example.test' }, /sent from http:\/\/mail\.example\.test,/],
    ['another port', { origin: 'https://mail.example.test:8443' }, /:8443/],
    [
      'no Origin, a foreign Referer',
      { referer: 'https://evil.example/trap?x=1' },
      /sent from https:\/\/evil\.example,/,
    ],
    ['Origin foreign, Referer ours', { origin: 'https://evil.example', referer: `${PUBLIC_URL}${url}` }, /evil/],
  ];
  for (const [what, headers, names] of refused) {
    const res = await post(url, fields, { cookie, ...headers });
    assert.is(res.statusCode, 403, what);
    assert.match(res.body, names, what);
  }
  assert.is(await passwordHashNow(), before, 'the password did not change');

  const ours = await post(url, fields, { cookie, origin: PUBLIC_URL, 'sec-fetch-site': 'same-origin' });
  assert.is(ours.statusCode, 303, ours.body);
  assert.is.not(await passwordHashNow(), before, 'from its own page, the form works');
});

test('form origin: Origin decides when present; else the Referer’s origin; with neither the guard alone decides', () => {
  const ours = 'https://mail.example.test';
  assert.equal(formPostOrigin({ origin: ours }, ours), { ours: true });
  assert.equal(formPostOrigin({ referer: `${ours}/reset-password?token=t` }, ours), { ours: true });
  assert.equal(formPostOrigin({}, ours), { ours: true });
  assert.equal(formPostOrigin({ referer: 'not a url' }, ours), { ours: false, seen: '(an unreadable Referer)' });
  assert.equal(formPostOrigin({ origin: 'x'.repeat(500) }, ours), { ours: false, seen: 'x'.repeat(200) });
});

test('a guard holds in its one spelling only (base64url leaves spare bits in the last character)', () => {
  const key = formGuardKey(ctx.deps.secrets.linkSigningKey);
  const nonce = 'n'.repeat(32);
  const input = { key, purpose: 'register' as const, linkToken: 'link-token-of-the-test' };
  const guard = issueFormGuard({ ...input, nonce });
  const check = (field: string) => formGuardHolds({ ...input, cookieHeader: `a=b; svc_form_guard=${nonce}`, field });
  assert.ok(check(guard));
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const accepted = [...alphabet].filter((c) => check(guard.slice(0, -1) + c));
  assert.equal(accepted, [guard.slice(-1)]);
  assert.not.ok(formGuardHolds({ ...input, cookieHeader: 'svc_form_guard=' + 'm'.repeat(32), field: guard }));
});

test('bad input answers the form again with the API’s rule, in the page’s language, never a 500', async () => {
  const token = await createOneTimeToken(ctx.db.sequelize, admin.id, 'reset-password');
  const url = `/reset-password?token=${token}&lang=es`;
  const { cookie, guard } = formOf(await get(url));
  const send = (fields: Record<string, string>) => post(url, { token, guard, ...fields }, { cookie });
  const before = await passwordHashNow();

  const short = await send({ password: 'short', repeatedPassword: 'short' });
  assert.is(short.statusCode, 400);
  assert.match(short.body, /role="alert"[^>]*>.*La contraseña debe tener al menos 10 caracteres/s);
  assert.match(short.body, /id="password"[^>]*aria-invalid="true"/);
  const long = await send({ password: 'x'.repeat(1025), repeatedPassword: 'x'.repeat(1025) });
  assert.is(long.statusCode, 400);
  assert.match(long.body, /demasiado larga/);
  const differ = await send({ password: 'first try password', repeatedPassword: 'second try password' });
  assert.is(differ.statusCode, 400);
  assert.match(differ.body, /no coinciden/);
  assert.not.match(differ.body, /first try password/, 'a password is never echoed');
  const missing = await post(url, { token, guard }, { cookie });
  assert.is(missing.statusCode, 400);
  const repeatedFields = await ctx.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    payload: `token=${token}&token=x&guard=${guard}&password=a&password=b`,
  });
  assert.ok(repeatedFields.statusCode >= 400 && repeatedFields.statusCode < 500, String(repeatedFields.statusCode));
  const json = await ctx.app.inject({ method: 'POST', url, payload: { token, guard } });
  assert.is(json.statusCode, 403);
  const badToken = await post('/reset-password?lang=es', { token: 'nope', guard }, { cookie });
  assert.is(badToken.statusCode, 410, 'a link that does not work gets its page, guard or not');
  assert.is(await passwordHashNow(), before, 'nothing changed');
});

test('verify-email: the GET never uses the link; the POST does, once; a dead link says what to do', async () => {
  await Admin.update({ emailVerifiedAt: null }, { where: { id: admin.id } });
  const token = await createOneTimeToken(ctx.db.sequelize, admin.id, 'verify-email');
  const url = `/verify-email?token=${token}`;
  for (let i = 0; i < 3; i++) assert.is((await get(url)).statusCode, 200, 'a scanner may open it any number of times');
  assert.is((await Admin.findByPk(admin.id))!.emailVerifiedAt, null);
  const { cookie, guard } = formOf(await get(url));
  const done = await post(url, { token, guard }, { cookie });
  assert.is(done.statusCode, 303);
  assert.is(done.headers.location, 'verify-email/done?lang=en');
  assert.ok((await Admin.findByPk(admin.id))!.emailVerifiedAt);

  const again = await post(url, { token, guard }, { cookie });
  assert.is(again.statusCode, 410);
  assert.match(again.body, /This link no longer works.*already used/s);
  const page = await get(url);
  assert.is(page.statusCode, 410);
  // A browser person gets a form that mails a new link, not an API call to make (issue 49 §5).
  assert.match(page.body, /<form method="post" action="verify-email\/new-link\?lang=en">/);
  assert.not.match(page.body, /POST \//);
});

test.run();
