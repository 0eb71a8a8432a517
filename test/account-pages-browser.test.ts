// The pages behind the links of system mail, in a real browser (Debian's Chromium): each link is
// taken from a captured mail, opened, its form filled and sent; then the database and a sign-in
// through the API say whether the flow really happened. Also: used and expired links, a form
// posted from another site, Spanish from the mail's link and from the browser's language.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import { simpleParser } from 'mailparser';
import { QueryTypes } from 'sequelize';
import type { Page } from 'playwright-core';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { launchChromium, type TestBrowser } from './helpers/browser.ts';
import { freePort } from './helpers/swaks.ts';
import { runJobs } from './helpers/send-jobs.ts';
import { latestCapturedMessageTo } from '../daemon/mail/system-mail.ts';
import { Admin } from '../daemon/modules/auth/model.ts';

const OWNER = 'owner@example.test';
const OWNER_PASSWORD = 'first password of the owner';
let ctx: TestContext;
let browser: TestBrowser;
let publicUrl: string;

test.before(async () => {
  const port = await freePort();
  publicUrl = `http://127.0.0.1:${port}`;
  ctx = await createTestContext({ env: { PUBLIC_URL: publicUrl, AUTH_RATE_LIMIT_MAX: '1000' } });
  await ctx.app.listen({ port, host: '127.0.0.1' });
  browser = await launchChromium();
});
test.after(async () => {
  await browser?.close();
  await ctx?.close();
});

/** The link of the latest captured system mail to `address` (delivered by the system-mail job). */
async function linkFromMail(address: string, path: string): Promise<string> {
  await runJobs(ctx, 'system');
  const message = await latestCapturedMessageTo(ctx.db.sequelize, address);
  assert.ok(message, `a mail to ${address} was captured`);
  const text = (await simpleParser(message!.raw)).text ?? '';
  const link = new RegExp(`${publicUrl.replace(/[.]/g, '\\.')}/${path}\\?\\S+`).exec(text);
  assert.ok(link, `the mail has a ${path} link:\n${text}`);
  return link![0];
}

async function api(method: string, url: string, payload?: object, headers: Record<string, string> = {}) {
  return ctx.app.inject({ method: method as 'POST', url, payload, headers });
}

async function signIn(email: string, password: string) {
  return api('POST', '/auth/login', { email, password });
}

async function adminRow(email: string) {
  const admin = await Admin.findOne({ where: { email } });
  assert.ok(admin, `${email} has an account`);
  return admin!;
}

/** Opens `url` in a new tab; the status is the answer's, the text what a person reads. */
async function open(url: string, headers: Record<string, string> = {}): Promise<{ page: Page; status: number }> {
  const page = await browser.context.newPage();
  await page.setExtraHTTPHeaders(headers);
  const response = await page.goto(url);
  return { page, status: response!.status() };
}

/** Presses the form's button and waits for the page the browser lands on (after any redirect). */
async function submit(page: Page): Promise<number> {
  const [response] = await Promise.all([page.waitForNavigation(), page.locator('button[type=submit]').click()]);
  return response!.status();
}

const heading = (page: Page) => page.locator('h1').innerText();

test('verify-email: the GET only shows a button (scanners prefetch); the button confirms the address', async () => {
  const registered = await api('POST', '/auth/register', { email: OWNER, password: OWNER_PASSWORD });
  assert.is(registered.statusCode, 201, registered.body);
  const link = await linkFromMail(OWNER, 'verify-email');
  assert.match(link, /[?&]lang=en\b/);

  const { page, status } = await open(link);
  assert.is(status, 200);
  assert.is(await heading(page), 'Confirm your e-mail address');
  assert.is((await adminRow(OWNER)).emailVerifiedAt, null, 'opening the link verified nothing');

  assert.is(await submit(page), 200);
  assert.match(page.url(), /\/verify-email\/done\?lang=en$/);
  assert.is(await heading(page), 'Your address is confirmed');
  assert.ok((await adminRow(OWNER)).emailVerifiedAt, 'the address is verified');
  const me = await signIn(OWNER, OWNER_PASSWORD);
  assert.is(me.statusCode, 200);
  const profile = await api('GET', '/auth/me', undefined, { authorization: `Bearer ${me.json().accessToken}` });
  assert.is(profile.json().emailVerified, true);

  const again = await open(link);
  assert.is(again.status, 410);
  assert.is(await heading(again.page), 'This link no longer works');
  assert.match(await again.page.locator('main').innerText(), /already used/);
  await page.close();
  await again.page.close();
});

test('reset-password in Spanish (the mail was): bad input comes back with its message, then the password changes', async () => {
  const before = (await adminRow(OWNER)).passwordHash;
  const asked = await api('POST', '/auth/forgot-password', { email: OWNER }, { 'accept-language': 'es-ES,es;q=0.9' });
  assert.is(asked.statusCode, 200);
  const link = await linkFromMail(OWNER, 'reset-password');
  assert.match(link, /[?&]lang=es\b/);

  // The browser asks for English: the page keeps the language of the mail.
  const { page, status } = await open(link);
  assert.is(status, 200);
  assert.is(await page.locator('html').getAttribute('lang'), 'es');
  assert.is(await heading(page), 'Elige una contraseña nueva');

  await page.getByLabel('Contraseña nueva', { exact: true }).fill('a brand new password');
  await page.getByLabel('Repite la contraseña nueva').fill('another brand new password');
  assert.is(await submit(page), 400);
  assert.match(await page.getByRole('alert').innerText(), /Las dos contraseñas no coinciden/);
  assert.is((await adminRow(OWNER)).passwordHash, before, 'nothing changed');

  await page.getByLabel('Contraseña nueva', { exact: true }).fill('a brand new password');
  await page.getByLabel('Repite la contraseña nueva').fill('a brand new password');
  assert.is(await submit(page), 200);
  assert.match(page.url(), /\/reset-password\/done\?lang=es$/);
  assert.is(await heading(page), 'Tu contraseña ha cambiado');

  assert.is.not((await adminRow(OWNER)).passwordHash, before, 'the password hash changed');
  assert.is((await signIn(OWNER, OWNER_PASSWORD)).statusCode, 401, 'the old password is refused');
  const signedIn = await signIn(OWNER, 'a brand new password');
  assert.is(signedIn.statusCode, 200, signedIn.body);
  assert.ok(signedIn.json().accessToken);

  const used = await open(link);
  assert.is(used.status, 410);
  assert.is(await heading(used.page), 'Este enlace ya no sirve');
  await page.close();
  await used.page.close();
});

test('an expired reset link gets a page that says so and how to get a new one', async () => {
  await api('POST', '/auth/forgot-password', { email: OWNER }, { 'accept-language': 'en' });
  const link = await linkFromMail(OWNER, 'reset-password');
  await ctx.db.sequelize.query(
    `UPDATE auth_tokens SET expires_at = now() - interval '1 minute' WHERE purpose = 'reset-password' AND used_at IS NULL`,
  );
  const { page, status } = await open(link);
  assert.is(status, 410);
  assert.is(await heading(page), 'This link no longer works');
  assert.match(await page.locator('main').innerText(), /expired \(reset links last 1 hour\)/);
  // The page offers a form that mails a new link (no API call to make by hand; issue 49 §5).
  await page.fill('#email', OWNER);
  await page.click('button[type=submit]');
  await page.waitForLoadState();
  assert.is(await heading(page), 'Check your mail');
  const fresh = await linkFromMail(OWNER, 'reset-password');
  assert.is.not(fresh, link, 'a new reset link was mailed');
  await page.close();
});

async function inviteMember(email: string, role: string): Promise<{ tenantId: string; link: string }> {
  // An access token as test fixtures sign one: inviting is set-up here, and a sign-in would spend a scrypt hash.
  const owner = await adminRow(OWNER);
  const token = ctx.app.jwt.sign({ sub: owner.id, typ: 'access', pa: owner.isPlatformAdmin });
  const tenant = await api('POST', '/tenants', { name: 'Acme & Sons' }, { authorization: `Bearer ${token}` });
  assert.is(tenant.statusCode, 201, tenant.body);
  const tenantId = tenant.json().id as string;
  const invited = await api(
    'POST',
    `/tenants/${tenantId}/members`,
    { email, role },
    { authorization: `Bearer ${token}`, 'x-tenant-id': tenantId },
  );
  assert.is(invited.statusCode, 202, invited.body);
  return { tenantId, link: await linkFromMail(email, 'register') };
}

test('invitation: the sign-up form joins the tenant with the invited role; the link then works no more', async () => {
  // Only invitees may register from now on: the page must still let this one in.
  await ctx.db.sequelize.query(`INSERT INTO platform_settings (key, value) VALUES ('registrationOpen', 'false')`);
  const { tenantId, link } = await inviteMember('new.viewer@example.test', 'viewer');

  const { page, status } = await open(link);
  assert.is(status, 200);
  assert.is(await heading(page), 'Create your account');
  assert.match(await page.locator('main').innerText(), /You are invited to join Acme & Sons as viewer\./);
  assert.is(await page.getByLabel('E-mail address').inputValue(), 'new.viewer@example.test');

  await page.getByLabel('Your name').fill('Nuria Viewer');
  await page.getByLabel('New password', { exact: true }).fill('short');
  await page.getByLabel('Repeat the new password').fill('short');
  // The browser enforces nothing here (no minlength): the API's own rule answers.
  assert.is(await submit(page), 400);
  assert.match(await page.getByRole('alert').innerText(), /at least 10 characters/);
  assert.is(await page.getByLabel('Your name').inputValue(), 'Nuria Viewer', 'what was typed is kept');

  await page.getByLabel('New password', { exact: true }).fill('viewer password 123');
  await page.getByLabel('Repeat the new password').fill('viewer password 123');
  assert.is(await submit(page), 200);
  assert.match(page.url(), /\/register\/done\?lang=en$/);
  assert.is(await heading(page), 'Your account is ready');

  const admin = await adminRow('new.viewer@example.test');
  assert.is(admin.name, 'Nuria Viewer');
  assert.ok(admin.emailVerifiedAt, 'the invitation proved the address');
  const [membership] = await ctx.db.sequelize.query<{ role: string }>(
    `SELECT role FROM memberships WHERE tenant_id = :tenantId AND admin_id = :adminId`,
    { replacements: { tenantId, adminId: admin.id }, type: QueryTypes.SELECT },
  );
  assert.is(membership?.role, 'viewer');
  const signedIn = await signIn('new.viewer@example.test', 'viewer password 123');
  assert.is(signedIn.statusCode, 200, signedIn.body);
  const me = await api('GET', '/auth/me', undefined, { authorization: `Bearer ${signedIn.json().accessToken}` });
  assert.equal(
    me.json().tenants.map((t: { id: string; role: string }) => [t.id, t.role]),
    [[tenantId, 'viewer']],
  );

  const used = await open(link);
  assert.is(used.status, 410);
  assert.match(await used.page.locator('main').innerText(), /invite you again/);
  await page.close();
  await used.page.close();
});

test('an expired invitation, in the browser’s language (Spanish: the invitation link carries none)', async () => {
  const { link } = await inviteMember('late@example.test', 'developer');
  await ctx.db.sequelize.query(`UPDATE invitations SET expires_at = now() - interval '1 minute' WHERE email = :email`, {
    replacements: { email: 'late@example.test' },
  });
  const { page, status } = await open(link, { 'accept-language': 'es-ES,es;q=0.9,en;q=0.5' });
  assert.is(status, 410);
  assert.is(await page.locator('html').getAttribute('lang'), 'es');
  assert.is(await heading(page), 'Este enlace ya no sirve');
  assert.match(await page.locator('main').innerText(), /Pide a quien te invitó que te invite de nuevo/);
  await page.close();
});

test('a form posted from another site is refused (the SameSite=Strict cookie stays home), nothing changes', async () => {
  await api('POST', '/auth/forgot-password', { email: OWNER }, { 'accept-language': 'en' });
  const link = await linkFromMail(OWNER, 'reset-password');
  const { page } = await open(link);
  // Even with the form's own hidden fields copied (the worst case), the other site cannot send the cookie.
  const token = await page.locator('input[name=token]').inputValue();
  const guard = await page.locator('input[name=guard]').inputValue();
  const before = (await adminRow(OWNER)).passwordHash;
  const attacker: Server = createServer((_request, response) => {
    response.setHeader('content-type', 'text/html');
    response.end(
      `<form method="post" action="${link}"><input name="token" value="${token}"><input name="guard" value="${guard}">` +
        `<input name="password" value="attacker password"><input name="repeatedPassword" value="attacker password">` +
        `<button type="submit">win a prize</button></form>`,
    );
  });
  const attackerPort = await freePort();
  await new Promise<void>((resolve) => attacker.listen(attackerPort, '127.0.0.1', resolve));
  try {
    // localhost and 127.0.0.1 are different sites.
    const lure = await open(`http://localhost:${attackerPort}/`);
    assert.is(await submit(lure.page), 403);
    assert.is(await heading(lure.page), 'This form did not come from this service');
    assert.match(await lure.page.getByRole('alert').innerText(), /Nothing was changed/);
    assert.is((await adminRow(OWNER)).passwordHash, before, 'the password did not change');
    await lure.page.close();
  } finally {
    // Chromium keeps a spare connection it opened in advance and never sent a request on: close() alone
    // would wait for the server's headers timeout (60 s) to drop it.
    attacker.closeAllConnections();
    await new Promise((resolve) => attacker.close(resolve));
  }
  // The real page still works afterwards.
  await page.getByLabel('New password', { exact: true }).fill('the final password');
  await page.getByLabel('Repeat the new password').fill('the final password');
  assert.is(await submit(page), 200);
  assert.is((await signIn(OWNER, 'the final password')).statusCode, 200);
  await page.close();
});

test.run();
