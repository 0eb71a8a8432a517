// Our system mail cannot be used to mail strangers (issue 48 §4): an invitation needs an inviter whose
// address is verified (a 403 that says how, then the real verification path lets it through), its
// subject is the platform's words with the tenant's name only as data in the body, each tenant and the
// platform send at most a daily number (429 with Retry-After), and names with control characters are
// refused where they are given (tenants, accounts, projects). Mail read from a real SMTP server.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createAdmin, createTenant, type AdminFixture } from './helpers/fixtures.ts';
import { runJobs } from './helpers/send-jobs.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp-sink.ts';
import { Admin } from '../daemon/modules/auth/model.ts';

const PUBLIC_URL = 'https://svc.example.com';
const PRIZE = 'You won a prize: claim it at https://evil.example/claim';
let ctx: TestContext;
let sink: SmtpSink;
let root: AdminFixture;

test.before(async () => {
  sink = await startSmtpSink();
  ctx = await createTestContext({
    env: { SMTP_URL: `smtp://127.0.0.1:${sink.port}`, PUBLIC_URL, AUTH_RATE_LIMIT_MAX: '1000' },
  });
  root = await createAdmin(ctx.app, { platformAdmin: true, email: 'root@example.test' });
});
test.after(async () => {
  await ctx?.close();
  await sink?.close();
});

const as = (admin: AdminFixture, tenantId?: string) => ({
  authorization: `Bearer ${admin.token}`,
  ...(tenantId ? { 'x-tenant-id': tenantId } : {}),
});
const invite = (admin: AdminFixture, tenantId: string, email: string) =>
  ctx.app.inject({
    method: 'POST',
    url: `/tenants/${tenantId}/members`,
    headers: as(admin, tenantId),
    payload: { email, role: 'viewer' },
  });
const count = async (sql: string, replacements: Record<string, unknown> = {}) =>
  (await ctx.db.sequelize.query<{ n: number }>(sql, { replacements, type: QueryTypes.SELECT }))[0].n;
const systemJobs = () => count(`SELECT count(*)::int AS n FROM jobs WHERE queue = 'system'`);

test('an unverified account cannot invite: 403 says how to verify; once verified the real way, it can', async () => {
  const fresh = await createAdmin(ctx.app, { email: 'fresh@example.test' });
  await Admin.update({ emailVerifiedAt: null }, { where: { id: fresh.id } });
  const tenantId = await createTenant(fresh.id, PRIZE);
  const jobsBefore = await systemJobs();

  const refused = await invite(fresh, tenantId, 'stranger@example.org');
  assert.is(refused.statusCode, 403, refused.body);
  assert.is(refused.json().code, 'EMAIL_NOT_VERIFIED');
  assert.match(refused.json().message, 'svc verify-email --resend');
  assert.is(await count(`SELECT count(*)::int AS n FROM invitations WHERE tenant_id = :tenantId`, { tenantId }), 0);
  assert.is(await systemJobs(), jobsBefore, 'no mail was queued');
  // Adding someone who already has an account mails nobody: not gated.
  const colleague = await createAdmin(ctx.app, { email: 'colleague@example.test' });
  const added = await invite(fresh, tenantId, colleague.email);
  assert.is(added.statusCode, 201, added.body);

  // The path the message names: a new verification link, opened.
  const resend = await ctx.app.inject({ method: 'POST', url: '/auth/resend-verification', headers: as(fresh) });
  assert.is(resend.statusCode, 200, resend.body);
  assert.equal(await runJobs(ctx, 'system'), ['done']);
  const mail = await sink.waitFor((m) => m.rcptTo.includes('fresh@example.test'));
  const token = /verify-email\?token=([A-Za-z0-9_-]+)/.exec(String(mail.parsed.text))?.[1];
  assert.ok(token, String(mail.parsed.text));
  const verified = await ctx.app.inject({ method: 'POST', url: '/auth/verify-email', payload: { token } });
  assert.is(verified.statusCode, 200, verified.body);
  const accepted = await invite(fresh, tenantId, 'stranger@example.org');
  assert.is(accepted.statusCode, 202, accepted.body);
});

test("the invitation's subject is the platform's words; the tenant's name is data in the body", async () => {
  const owner = await createAdmin(ctx.app, { email: 'owner@example.test' });
  const tenantId = await createTenant(owner.id, PRIZE);
  const res = await invite(owner, tenantId, 'target@example.org');
  assert.is(res.statusCode, 202, res.body);
  await runJobs(ctx, 'system');
  const mail = await sink.waitFor((m) => m.rcptTo.includes('target@example.org'));
  assert.is(String(mail.parsed.subject), 'Invitation to join a team on svc.example.com');
  assert.not.match(mail.raw.split('\r\n\r\n')[0], /prize|evil\.example/i, 'nothing of the name in the header');
  const text = String(mail.parsed.text);
  assert.ok(text.startsWith('You are invited to join a team on svc.example.com as viewer.\n'), text);
  assert.match(text, `Team name: ${PRIZE}\nInvited by: owner@example.test\n`);
  assert.match(String(mail.parsed.html), '<th align="left">Team name</th><td>You won a prize: claim it at');
});

test('daily caps: a tenant, then the platform, get 429 with Retry-After; an older window frees them', async () => {
  await ctx.db.sequelize.query(`DELETE FROM invitation_sends`);
  const settings = await ctx.app.inject({
    method: 'PATCH',
    url: '/platform/settings',
    headers: as(root),
    payload: { invitationsPerTenantPerDay: 3, invitationsPerPlatformPerDay: 5 },
  });
  assert.is(settings.statusCode, 200, settings.body);
  const owner = await createAdmin(ctx.app, { email: 'busy@example.test' });
  const first = await createTenant(owner.id, 'First');
  const second = await createTenant(owner.id, 'Second');
  const jobsBefore = await systemJobs();

  for (const n of [1, 2, 3]) assert.is((await invite(owner, first, `a${n}@example.org`)).statusCode, 202);
  const overTenant = await invite(owner, first, 'a4@example.org');
  assert.is(overTenant.statusCode, 429, overTenant.body);
  assert.is(overTenant.json().code, 'INVITATION_LIMIT');
  assert.match(overTenant.json().message, 'This tenant has sent the 3 invitations allowed in 24 hours');
  const retryAfter = Number(overTenant.headers['retry-after']);
  assert.ok(retryAfter > 86_000 && retryAfter <= 86_400, String(retryAfter));
  // Re-inviting a pending address is another mail: it counts too.
  assert.is((await invite(owner, first, 'a1@example.org')).statusCode, 429);

  for (const n of [1, 2]) assert.is((await invite(owner, second, `b${n}@example.org`)).statusCode, 202);
  const overPlatform = await invite(owner, second, 'b3@example.org');
  assert.is(overPlatform.statusCode, 429);
  assert.match(overPlatform.json().message, 'The platform has sent the 5 invitations allowed in 24 hours');
  assert.is(await systemJobs(), jobsBefore + 5, 'five mails, no more');
  assert.is(await count(`SELECT count(*)::int AS n FROM invitations WHERE email = 'b3@example.org'`), 0);

  // Deleting a tenant does not give its count back (the platform's stays full).
  await ctx.db.sequelize.query(`DELETE FROM tenants WHERE id = :first`, { replacements: { first } });
  assert.is((await invite(owner, second, 'b3@example.org')).statusCode, 429);
  // A day later the window has moved on.
  await ctx.db.sequelize.query(`UPDATE invitation_sends SET sent_at = sent_at - interval '25 hours'`);
  assert.is((await invite(owner, second, 'b3@example.org')).statusCode, 202);
  await ctx.db.sequelize.query(`DELETE FROM platform_settings WHERE key LIKE 'invitations%'`);
});

test('names with control characters are refused where they are given, naming the field', async () => {
  const owner = await createAdmin(ctx.app, { email: 'namer@example.test' });
  for (const name of ['Acme\r\nBcc: victim@example.org', 'Acme\tTab', 'Acme\u0085Next line', 'Esc\u001b[31m']) {
    const created = await ctx.app.inject({ method: 'POST', url: '/tenants', headers: as(owner), payload: { name } });
    assert.is(created.statusCode, 400, `${JSON.stringify(name)}: ${created.body}`);
    assert.is(created.json().code, 'VALIDATION_FAILED');
    assert.equal(created.json().details, [
      {
        field: 'name',
        message: 'must not contain control characters (line breaks, tabs and other C0/C1 controls)',
      },
    ]);
  }
  assert.is(await count(`SELECT count(*)::int AS n FROM tenants WHERE name LIKE 'Acme%' OR name LIKE 'Esc%'`), 0);

  const plain = await ctx.app.inject({
    method: 'POST',
    url: '/tenants',
    headers: as(owner),
    payload: { name: 'Ünïcödé — Acme & Sons' },
  });
  assert.is(plain.statusCode, 201, plain.body);
  const tenantId = plain.json().id as string;
  const renamed = await ctx.app.inject({
    method: 'PATCH',
    url: `/tenants/${tenantId}`,
    headers: as(owner, tenantId),
    payload: { name: 'New\nname' },
  });
  assert.is(renamed.statusCode, 400, renamed.body);
  assert.is(renamed.json().details[0].field, 'name');
  const [stored] = await ctx.db.sequelize.query<{ name: string }>(`SELECT name FROM tenants WHERE id = :tenantId`, {
    replacements: { tenantId },
    type: QueryTypes.SELECT,
  });
  assert.is(stored.name, 'Ünïcödé — Acme & Sons');

  const project = await ctx.app.inject({
    method: 'POST',
    url: '/projects',
    headers: as(owner, tenantId),
    payload: { name: 'Shop\r\nSubject: hi' },
  });
  assert.is(project.statusCode, 400, project.body);
  assert.is(project.json().details[0].field, 'name');

  const registered = await ctx.app.inject({
    method: 'POST',
    url: '/auth/register',
    payload: { email: 'newcomer@example.test', password: 'correct horse battery', name: 'Ada\nYou won' },
  });
  assert.is(registered.statusCode, 400, registered.body);
  assert.is(registered.json().details[0].field, 'name');
  assert.is(await count(`SELECT count(*)::int AS n FROM admins WHERE email = 'newcomer@example.test'`), 0);
});

test.run();
