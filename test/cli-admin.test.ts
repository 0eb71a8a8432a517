// The hand-made admin commands against a real daemon, run in-process (test/helpers/svc-inprocess.ts, which
// also fails any command that calls an operation it does not declare): members and invitations, tenants,
// platform settings typed by their schema, passwords, sessions.
import { test } from 'uvu';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeSelfSignedPair } from './helpers/certificates.ts';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createAdmin, createTenant } from './helpers/fixtures.ts';
import { listen } from './helpers/svc-cli.ts';
import { InProcessCli, operationMatchers } from './helpers/svc-inprocess.ts';
import { Membership, Tenant } from '../daemon/modules/tenants/model.ts';
import { PlatformSetting } from '../daemon/modules/platform/model.ts';
import { insertKeptReport } from '../daemon/modules/inbound/kept-reports.ts';

let ctx: TestContext;
let cli: InProcessCli;
const state: { tenantId?: string; ownerEmail?: string; memberId?: string } = {};

test.before(async () => {
  ctx = await createTestContext();
  const document = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  cli = new InProcessCli(await listen(ctx), operationMatchers(document));
  const owner = await createAdmin(ctx.app, { platformAdmin: true });
  state.tenantId = await createTenant(owner.id, 'Acme');
  state.ownerEmail = owner.email;
  cli.writeProfile({ accessToken: owner.token, tenantId: state.tenantId, tenantName: 'Acme', email: owner.email });
});
test.after(async () => {
  cli?.cleanup();
  await ctx?.close();
});

test('members: invite an existing admin and a new address, list, change a role, remove; the last owner stays', async () => {
  const existing = await createAdmin(ctx.app, { email: 'dev@example.test' });
  const added = await cli.run(['members', 'invite', 'DEV@example.test', '--role', 'developer', '--json']);
  assert.is(added.code, 0, added.stdout + added.stderr);
  assert.equal([added.json.adminId, added.json.role], [existing.id, 'developer']);
  const invited = await cli.run(['members', 'invite', 'new@example.test', '--role', 'viewer', '--json']);
  assert.is(invited.code, 0, invited.stdout);
  assert.equal([invited.json.email, invited.json.role], ['new@example.test', 'viewer']);
  assert.ok(invited.json.invitationId);
  const human = await cli.run(['members', 'list']);
  assert.match(human.stdout, 'dev@example.test');
  assert.match(human.stdout, 'developer');
  const role = await cli.run(['members', 'role', 'dev@example.test', 'admin', '--json']);
  assert.is(role.json.role, 'admin');
  const row = await Membership.findOne({ where: { tenantId: state.tenantId, adminId: existing.id } });
  assert.is(row?.role, 'admin');
  const demoteOwner = await cli.run(['members', 'role', state.ownerEmail!, 'viewer', '--json']);
  assert.is(demoteOwner.code, 1);
  assert.is(demoteOwner.json.error.status, 409);
  const removed = await cli.run(['members', 'remove', existing.id, '--json']);
  assert.is(removed.code, 0, removed.stdout);
  assert.is(await Membership.count({ where: { tenantId: state.tenantId, adminId: existing.id } }), 0);
  const unknown = await cli.run(['members', 'remove', 'nobody@example.test', '--json']);
  assert.is(unknown.json.error.code, 'NOT_A_MEMBER');
});

test('tenants: rename (the profile follows), plan and limit, block and unblock, resume-sending, audit, delete with --yes', async () => {
  const renamed = await cli.run(['tenants', 'rename', 'Acme Ltd', '--json']);
  assert.is(renamed.json.name, 'Acme Ltd');
  assert.is((await Tenant.findByPk(state.tenantId))?.name, 'Acme Ltd');
  const plan = await cli.run(['tenants', 'plan', 'pro', '--monthly-limit', '1234', '--json']);
  assert.is(plan.code, 0, plan.stdout);
  assert.equal([plan.json.plan, plan.json.monthlyLimit], ['pro', 1234]);
  const cleared = await cli.run(['tenants', 'plan', '--monthly-limit', 'none', '--json']);
  assert.is(cleared.json.monthlyLimit, null);
  const bad = await cli.run(['tenants', 'plan', '--monthly-limit', 'lots', '--json']);
  assert.is(bad.code, 2);
  const other = await createTenant((await createAdmin(ctx.app)).id, 'Spammy');
  const blocked = await cli.run(['tenants', 'block', other, '--json']);
  assert.is(blocked.json.status, 'blocked');
  assert.is((await Tenant.findByPk(other))?.status, 'blocked');
  const unblocked = await cli.run(['tenants', 'unblock', other, '--json']);
  assert.is(unblocked.json.status, 'active');
  const resumed = await cli.run(['tenants', 'resume-sending', '--json']);
  assert.is(resumed.code, 0, resumed.stdout);
  assert.is(resumed.json.sendingPausedAt, null);
  const audit = await cli.run(['tenants', 'audit', '--limit', '50', '--json']);
  const actions = audit.json.data.map((event: { action: string }) => event.action);
  assert.ok(
    actions.some((action: string) => action.startsWith('member')),
    actions.join(','),
  );
  const unconfirmed = await cli.run(['tenants', 'delete', other, '--json']);
  assert.is(unconfirmed.json.error.code, 'CONFIRMATION_REQUIRED');
  assert.ok(await Tenant.findByPk(other));
});

test('platform settings: show, set typed by the schema (boolean, integer, nullable), --json-body, unknown key', async () => {
  const shown = await cli.run(['platform', 'settings', 'show', '--json']);
  assert.is(shown.json.registrationOpen, true);
  const set = await cli.run([
    'platform',
    'settings',
    'set',
    'registrationOpen=false',
    'logRetentionDays=45',
    'defaultFromAddress=no-reply@mail.example.com',
    '--json',
  ]);
  assert.is(set.code, 0, set.stdout + set.stderr);
  assert.equal([set.json.registrationOpen, set.json.logRetentionDays], [false, 45]);
  const stored = await PlatformSetting.findByPk('logRetentionDays');
  assert.is(stored?.value, 45);
  const cleared = await cli.run(['platform', 'settings', 'set', 'defaultFromAddress=null', '--json']);
  assert.is(cleared.json.defaultFromAddress, null);
  const body = await cli.run(['platform', 'settings', 'set', '--json-body', '{"registrationOpen":true}', '--json']);
  assert.is(body.json.registrationOpen, true);
  const unknown = await cli.run(['platform', 'settings', 'set', 'colour=blue', '--json']);
  assert.is(unknown.code, 2);
  assert.match(unknown.json.error.message, 'registrationOpen');
  const invalid = await cli.run(['platform', 'settings', 'set', 'logRetentionDays=0', '--json']);
  assert.is(invalid.code, 1);
  assert.is(invalid.json.error.code, 'VALIDATION_FAILED');
});

test('password change from stdin revokes other sessions; forgot answers alike for any address; logout --all', async () => {
  const email = 'pw@example.test';
  const registered = await ctx.app.inject({
    method: 'POST',
    url: '/auth/register',
    payload: { email, password: 'first-password-1' },
  });
  assert.is(registered.statusCode, 201, registered.body);
  const login = async (password: string) =>
    ctx.app.inject({ method: 'POST', url: '/auth/login', payload: { email, password } });
  const other = (await login('first-password-1')).json();
  const mine = (await login('first-password-1')).json();
  cli.writeProfile({ accessToken: mine.accessToken, refreshToken: mine.refreshToken, email }, 'pw');
  const noStdin = await cli.run(['password', 'change', '--profile', 'pw', '--json']);
  assert.is(noStdin.code, 2);
  const changed = await cli.run(['password', 'change', '--profile', 'pw', '--password-stdin', '--json'], {
    input: 'first-password-1\nsecond-password-2\n',
  });
  assert.is(changed.code, 0, changed.stdout + changed.stderr);
  assert.is(changed.json.revokedSessions, 1);
  assert.is((await login('second-password-2')).statusCode, 200);
  const refreshed = await ctx.app.inject({
    method: 'POST',
    url: '/auth/refresh',
    payload: { refreshToken: other.refreshToken },
  });
  assert.is(refreshed.statusCode, 401, 'the other session is gone');
  for (const address of [email, 'nobody@example.test']) {
    const forgot = await cli.run(['password', 'forgot', '--email', address, '--json']);
    assert.is(forgot.code, 0, forgot.stdout);
  }
  const reset = await cli.run(['password', 'reset', '--token', 'x'.repeat(40), '--password-stdin', '--json'], {
    input: 'third-password-3',
  });
  assert.is(reset.code, 1, reset.stdout);
  const all = await cli.run(['logout', '--all', '--profile', 'pw', '--json']);
  assert.is(all.code, 0, all.stdout + all.stderr);
  assert.is(all.json.revoked, true);
  const after = await cli.run(['whoami', '--profile', 'pw', '--json']);
  assert.is(after.json.error.code, 'NOT_SIGNED_IN');
  assert.not.match(JSON.stringify([changed, reset, all]), /password-[123]/);
});

test('the --ca given at register is kept in the profile: later commands trust it without the flag', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ca-'));
  const { cert } = makeSelfSignedPair(dir, 'ca', 'Private CA');
  await cli.run(['platform', 'settings', 'set', 'registrationOpen=true', '--json']);
  const registered = await cli.run(
    ['register', '--email', 'ca@example.test', '--password-stdin', '--ca', cert, '--profile', 'ca', '--json'],
    { input: 'ca-password-123' },
  );
  assert.is(registered.code, 0, registered.stdout + registered.stderr);
  const stored = JSON.parse(readFileSync(cli.profileFile, 'utf8')).profiles.ca;
  assert.is(stored.caFile, cert);
  // The profile's CA is read by the next command: once it is not a PEM file, that command says so.
  writeFileSync(cert, 'not a certificate');
  const later = await cli.run(['whoami', '--profile', 'ca', '--json']);
  assert.is.not(later.code, 0);
  assert.match(later.json.error.message, 'holds no PEM certificate');
  rmSync(dir, { recursive: true, force: true });
});

test('platform reports: lists the reports kept without effect, filtered by disposition', async () => {
  await insertKeptReport(ctx.db.sequelize, {
    disposition: 'unverified',
    kind: 'complaint',
    source: 'smtp',
    reason: 'it carries no DKIM signature',
    reporter: 'abuse@isp.example.org',
    recipients: ['victim@example.org'],
  });
  await insertKeptReport(ctx.db.sequelize, {
    disposition: 'unmatched',
    kind: 'bounce',
    source: 'smtp-dsn',
    reason: 'names no recipient the send went to',
  });
  const all = await cli.run(['platform', 'reports', '--json']);
  assert.is(all.code, 0, all.stdout + all.stderr);
  assert.equal(all.json.data.map((report: { disposition: string }) => report.disposition).sort(), [
    'unmatched',
    'unverified',
  ]);
  const unverified = await cli.run(['platform', 'reports', '--disposition', 'unverified', '--json']);
  assert.equal(
    unverified.json.data.map((report: { reporter: string; recipients: string[] }) => [
      report.reporter,
      report.recipients,
    ]),
    [['abuse@isp.example.org', ['victim@example.org']]],
  );
  const human = await cli.run(['platform', 'reports']);
  assert.match(human.stdout, 'it carries no DKIM signature');
  const bad = await cli.run(['platform', 'reports', '--disposition', 'forged']);
  assert.is.not(bad.code, 0);
});

test('status: the current tenant, ok, then at risk and paused with the numbers behind each', async () => {
  const ok = await cli.run(['status', '--json']);
  assert.is(ok.code, 0, ok.stdout + ok.stderr);
  assert.is(ok.json.tenant.id, state.tenantId);
  assert.is(ok.json.sending, null);
  const reason = 'complaint rate 0.13 % (2 complaints from distinct recipients over the last 1500 sends)';
  await Tenant.update({ sendingAtRiskAt: new Date(), sendingAtRiskReason: reason }, { where: { id: state.tenantId } });
  const warned = await cli.run(['status']);
  assert.is(warned.code, 0);
  assert.match(warned.stdout, /sending\s+at-risk/);
  assert.match(warned.stdout, `! sending at risk: ${reason}`);
  await Tenant.update(
    { sendingPausedAt: new Date(), sendingPausedReason: 'hard-bounce rate 10 % is at or above the 10 % pause level' },
    { where: { id: state.tenantId } },
  );
  const paused = await cli.run(['status', '--json']);
  assert.equal(paused.json.sending, {
    level: 'paused',
    message: 'sending paused: hard-bounce rate 10 % is at or above the 10 % pause level',
  });
  await Tenant.update(
    { sendingPausedAt: null, sendingPausedReason: null, sendingAtRiskAt: null, sendingAtRiskReason: null },
    { where: { id: state.tenantId } },
  );
});

test.run();
