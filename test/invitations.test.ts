// Inviting an address with no account: the invitation mail (read from a real SMTP server) carries a
// sign-up link on PUBLIC_URL; registering with its token joins the tenant with the invited role,
// even while registration is closed. Tokens are stored hashed, work once, expire, and only for the
// invited address.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createAdmin, createTenant, type AdminFixture } from './helpers/fixtures.ts';
import { runJobs } from './helpers/send-jobs.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp-sink.ts';
import { hashToken } from '../daemon/modules/auth/tokens.ts';

const PUBLIC_URL = 'https://svc.example.com';
let ctx: TestContext;
let sink: SmtpSink;
let owner: AdminFixture;
let tenantId: string;

test.before(async () => {
  sink = await startSmtpSink();
  ctx = await createTestContext({
    env: { SMTP_URL: `smtp://127.0.0.1:${sink.port}`, PUBLIC_URL, AUTH_RATE_LIMIT_MAX: '1000' },
  });
  owner = await createAdmin(ctx.app, { platformAdmin: true, email: 'owner@example.test' });
  tenantId = await createTenant(owner.id, 'Acme Mail');
  // Only invitees may register from now on.
  await ctx.db.sequelize.query(`INSERT INTO platform_settings (key, value) VALUES ('registrationOpen', 'false')`);
});
test.after(async () => {
  await ctx?.close();
  await sink?.close();
});

const asOwner = () => ({ authorization: `Bearer ${owner.token}`, 'x-tenant-id': tenantId });
const register = (payload: Record<string, unknown>) =>
  ctx.app.inject({ method: 'POST', url: '/auth/register', payload });

async function invite(email: string, role: string): Promise<string> {
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/tenants/${tenantId}/members`,
    headers: asOwner(),
    payload: { email, role },
  });
  assert.is(res.statusCode, 202, res.body);
  assert.is(res.json().role, role);
  assert.equal(await runJobs(ctx, 'system'), ['done']);
  const mail = await sink.waitFor((m) => m.rcptTo.includes(email.toLowerCase()));
  const link = /https:\/\/svc\.example\.com\/register\?invitation=([A-Za-z0-9_-]+)/.exec(String(mail.parsed.text));
  assert.ok(link, String(mail.parsed.text));
  assert.is(String(mail.parsed.subject), 'Invitation to join a team on svc.example.com');
  assert.match(String(mail.parsed.text), `You are invited to join a team on svc.example.com as ${role}.`);
  assert.match(String(mail.parsed.text), 'Team name: Acme Mail\nInvited by: owner@example.test\n');
  sink.messages.splice(sink.messages.indexOf(mail), 1);
  return link[1];
}

test('an invited address registers with the token and joins with the invited role; the token works once', async () => {
  const token = await invite('New.Dev@example.test', 'developer');
  const [stored] = await ctx.db.sequelize.query<{ token_hash: string; email: string }>(
    `SELECT token_hash, email FROM invitations WHERE tenant_id = :tenantId`,
    { replacements: { tenantId }, type: QueryTypes.SELECT },
  );
  assert.is(stored.token_hash, hashToken(token), 'only the hash is stored');
  assert.is(stored.email, 'new.dev@example.test');

  // Registration is closed for everyone else.
  const closed = await register({ email: 'walk-in@example.test', password: 'correct horse battery' });
  assert.is(closed.statusCode, 403);
  // The token is for the invited address only.
  const otherAddress = await register({
    email: 'someone-else@example.test',
    password: 'correct horse battery',
    invitationToken: token,
  });
  assert.is(otherAddress.statusCode, 400);
  assert.is(otherAddress.json().code, 'INVALID_TOKEN');

  const joined = await register({
    email: 'new.dev@example.test',
    password: 'correct horse battery',
    invitationToken: token,
  });
  assert.is(joined.statusCode, 201, joined.body);
  assert.is(joined.json().admin.emailVerified, true);
  const adminId = joined.json().admin.id;
  const [membership] = await ctx.db.sequelize.query<{ role: string }>(
    `SELECT role FROM memberships WHERE tenant_id = :tenantId AND admin_id = :adminId`,
    { replacements: { tenantId, adminId }, type: QueryTypes.SELECT },
  );
  assert.is(membership.role, 'developer');
  // No verification mail: the invitation proved the address.
  assert.equal(await runJobs(ctx, 'system'), []);

  const members = await ctx.app.inject({ method: 'GET', url: `/tenants/${tenantId}/members`, headers: asOwner() });
  assert.ok(
    members
      .json()
      .data.some((m: { email: string; role: string }) => m.email === 'new.dev@example.test' && m.role === 'developer'),
  );

  const again = await register({
    email: 'new.dev@example.test',
    password: 'correct horse battery',
    invitationToken: token,
  });
  assert.is(again.statusCode, 400);
  assert.is(again.json().code, 'INVALID_TOKEN');
});

test('an expired invitation, or one replaced by a newer one, is refused', async () => {
  const first = await invite('late@example.test', 'viewer');
  const second = await invite('late@example.test', 'admin');
  const replaced = await register({
    email: 'late@example.test',
    password: 'correct horse battery',
    invitationToken: first,
  });
  assert.is(replaced.statusCode, 400);
  await ctx.db.sequelize.query(
    `UPDATE invitations SET expires_at = now() - interval '1 second' WHERE email = 'late@example.test'`,
  );
  const expired = await register({
    email: 'late@example.test',
    password: 'correct horse battery',
    invitationToken: second,
  });
  assert.is(expired.statusCode, 400);
  assert.is(expired.json().code, 'INVALID_TOKEN');
  const [{ n }] = await ctx.db.sequelize.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM admins WHERE email = 'late@example.test'`,
    { type: QueryTypes.SELECT },
  );
  assert.is(n, 0);
});

test('inviting needs the admin role, and only owners invite owners', async () => {
  const viewer = await createAdmin(ctx.app, { email: 'just-a-viewer@example.test' });
  await ctx.db.sequelize.query(
    `INSERT INTO memberships (tenant_id, admin_id, role) VALUES (:tenantId, :id, 'viewer')`,
    { replacements: { tenantId, id: viewer.id } },
  );
  const byViewer = await ctx.app.inject({
    method: 'POST',
    url: `/tenants/${tenantId}/members`,
    headers: { authorization: `Bearer ${viewer.token}`, 'x-tenant-id': tenantId },
    payload: { email: 'friend@example.test', role: 'viewer' },
  });
  assert.is(byViewer.statusCode, 403);
  const [{ n }] = await ctx.db.sequelize.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM invitations WHERE email = 'friend@example.test'`,
    { type: QueryTypes.SELECT },
  );
  assert.is(n, 0);
});

test.run();
