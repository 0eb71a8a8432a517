// The svc CLI against a real daemon: registration, profiles, tenants, keys, token refresh and expiry,
// the 2FA login without a terminal, and exit codes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { TotpClock } from './helpers/totp-clock.ts';
import { listen } from './helpers/svc-cli.ts';
import { InProcessCli, operationMatchers } from './helpers/svc-inprocess.ts';
import { Admin } from '../daemon/modules/auth/model.ts';
import { ApiKey, Membership } from '../daemon/modules/tenants/model.ts';

let ctx: TestContext;
let cli: InProcessCli;
const EMAIL = 'ops@cli.test';
const PASSWORD = 'correct-horse-battery';
const state: { tenantId?: string; secondTenantId?: string; keyId?: string } = {};

const profile = () => JSON.parse(readFileSync(cli.profileFile, 'utf8')).profiles.default;
const editProfile = (changes: Record<string, string>) => {
  const file = JSON.parse(readFileSync(cli.profileFile, 'utf8'));
  Object.assign(file.profiles.default, changes);
  writeFileSync(cli.profileFile, JSON.stringify(file));
};

test.before(async () => {
  ctx = await createTestContext();
  const document = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  cli = new InProcessCli(await listen(ctx), operationMatchers(document));
});
test.after(async () => {
  cli?.cleanup();
  await ctx?.close();
});

test('commands refuse to act before anyone signed in, naming the next step (exit 3)', async () => {
  // Spawned: the exit status a shell sees from the binary, and its next step written as it was run.
  const run = await cli.spawn(['whoami', '--json']);
  assert.is(run.code, 3);
  assert.is(run.json.error.code, 'NOT_SIGNED_IN');
  assert.match(run.json.error.message, 'node bin/svc.js login');
});

test('register creates the first admin, signs in and creates the tenant; the profile file is 0600', async () => {
  const run = await cli.run(['register', '--email', EMAIL, '--password-stdin', '--tenant', 'Acme', '--json'], {
    input: PASSWORD,
  });
  assert.is(run.code, 0, run.stderr);
  assert.is(run.json.admin.email, EMAIL);
  assert.is(run.json.tenant.name, 'Acme');
  state.tenantId = run.json.tenant.id;
  const admin = await Admin.findOne({ where: { email: EMAIL } });
  assert.ok(admin?.isPlatformAdmin, 'the first admin is platform admin');
  const membership = await Membership.findOne({ where: { tenantId: state.tenantId, adminId: admin!.id } });
  assert.is(membership?.role, 'owner');
  assert.is(statSync(cli.profileFile).mode & 0o777, 0o600);
  const stored = profile();
  assert.is(stored.tenantId, state.tenantId);
  assert.type(stored.accessToken, 'string');
  assert.type(stored.refreshToken, 'string');
  assert.not.match(readFileSync(cli.profileFile, 'utf8'), PASSWORD);
});

test('a short password is refused with the API sentence and exit 1', async () => {
  const run = await cli.run(['register', '--email', 'second@cli.test', '--password-stdin', '--json'], {
    input: 'short',
  });
  assert.is(run.code, 1, run.stdout);
  assert.is(run.json.error.status, 400);
  assert.type(run.json.error.message, 'string');
});

test('whoami reports the admin and the current tenant; human mode prints the header on stderr', async () => {
  const json = await cli.run(['whoami', '--json']);
  assert.is(json.code, 0, json.stderr);
  assert.is(json.json.kind, 'admin');
  assert.is(json.json.email, EMAIL);
  assert.is(json.json.tenant.id, state.tenantId);
  assert.is(json.json.tenant.role, 'owner');
  const human = await cli.run(['whoami']);
  assert.is(human.code, 0);
  assert.match(human.stdout, EMAIL);
  assert.match(human.stderr, `tenant Acme (${state.tenantId})`);
  assert.not.match(human.stdout + human.stderr, '\u001b[', 'NO_COLOR turns colours off');
});

test('tenants create --no-use, list marks the current one, use switches, an unknown id is refused', async () => {
  const created = await cli.run(['tenants', 'create', '--name', 'Second', '--no-use', '--json']);
  assert.is(created.code, 0, created.stderr);
  state.secondTenantId = created.json.id;
  assert.is(created.json.current, false);
  const list = await cli.run(['tenants', 'list', '--json']);
  const rows = list.json.tenants as { id: string; current: boolean }[];
  assert.is(rows.length, 2);
  assert.is(rows.find((row) => row.current)?.id, state.tenantId);
  const use = await cli.run(['tenants', 'use', state.secondTenantId!, '--json']);
  assert.is(use.code, 0);
  assert.is(profile().tenantId, state.secondTenantId);
  assert.is(profile().tenantName, 'Second');
  const unknown = await cli.run(['tenants', 'use', '00000000-0000-4000-8000-000000000000', '--json']);
  assert.is(unknown.code, 1);
  assert.is(unknown.json.error.code, 'NOT_A_MEMBER');
  assert.is(profile().tenantId, state.secondTenantId, 'a refused switch changes nothing');
  await cli.run(['tenants', 'use', state.tenantId!]);
});

test('the dashboard says the queue panel is unavailable when the database does not answer its statistics (a 503), and shows the rest', async () => {
  // The queue statistics wait behind this lock until /health/queues gives up (2 s) and answers 503.
  const locked = await ctx.db.sequelize.transaction();
  try {
    await ctx.db.sequelize.query('LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE', { transaction: locked });
    const dashboard = await cli.run(['dashboard']);
    assert.is(dashboard.code, 0, dashboard.stderr);
    assert.match(
      dashboard.stdout,
      /queue depth {6}unavailable: Queue statistics are unavailable: the database did not answer within 2000 ms/,
    );
    assert.match(dashboard.stdout, /tenant {11}Acme/);
    assert.not.match(dashboard.stdout + dashboard.stderr, /TypeError/);
  } finally {
    await locked.rollback();
  }
});

test('tenants list and the dashboard show a sending warning and a pause with the numbers behind them', async () => {
  const warning =
    'complaint rate 0.13 % (2 complaints from distinct recipients over the last 1500 sends) is at or above the 0.1 % warning level';
  const pause =
    'hard-bounce rate 10 % (150 hard bounces from distinct recipients over the last 1500 sends) is at or above the 10 % pause level';
  await ctx.db.sequelize.query(
    `UPDATE tenants SET sending_at_risk_at = now(), sending_at_risk_reason = :warning WHERE id = :first;
     UPDATE tenants SET sending_paused_at = now(), sending_paused_reason = :pause, sending_at_risk_at = now(),
            sending_at_risk_reason = :pause WHERE id = :second`,
    { replacements: { warning, pause, first: state.tenantId, second: state.secondTenantId } },
  );
  try {
    const list = await cli.run(['tenants', 'list']);
    assert.is(list.code, 0, list.stderr);
    assert.match(list.stdout, /SENDING/);
    assert.match(list.stdout, `! Acme: sending at risk: ${warning}`);
    assert.match(list.stdout, `! Second: sending paused: ${pause}`);
    const json = await cli.run(['tenants', 'list', '--json']);
    const first = (json.json.tenants as Array<{ id: string; sendingAtRiskReason: string }>).find(
      (t) => t.id === state.tenantId,
    );
    assert.is(first?.sendingAtRiskReason, warning);
    // The dashboard's snapshot (no terminal) of the current tenant, Acme, carries its warning.
    const dashboard = await cli.run(['dashboard']);
    assert.ok(
      dashboard.stdout.includes(`sending          sending at risk: ${warning}`),
      dashboard.stdout + dashboard.stderr,
    );
  } finally {
    await ctx.db.sequelize.query(
      `UPDATE tenants SET sending_at_risk_at = NULL, sending_at_risk_reason = NULL, sending_paused_at = NULL,
              sending_paused_reason = NULL WHERE id IN (:ids)`,
      { replacements: { ids: [state.tenantId, state.secondTenantId] } },
    );
  }
});

test('tenants use without an id and without a terminal fails with a sentence instead of a picker (exit 2)', async () => {
  // Spawned: the picker is left out because the binary's stdin is not a terminal.
  const run = await cli.spawn(['tenants', 'use']);
  assert.is(run.code, 2);
  assert.match(run.stderr, 'node bin/svc.js tenants use <id|name>');
});

test('SVC_TENANT_ID overrides the profile tenant; another profile is empty', async () => {
  const run = await cli.run(['whoami', '--json'], { env: { SVC_TENANT_ID: state.secondTenantId } });
  assert.is(run.json.tenant.id, state.secondTenantId);
  const other = await cli.run(['whoami', '--json', '--profile', 'staging']);
  assert.is(other.code, 3);
  assert.match(other.json.error.message, 'profile "staging"');
});

test('keys create prints the key once; list, rotate and revoke work; the key then fails with exit 3', async () => {
  const created = await cli.run([
    'keys',
    'create',
    '--name',
    'ci',
    '--scope',
    'email:send',
    '--scope',
    'email:read',
    '--json',
  ]);
  assert.is(created.code, 0, created.stderr);
  assert.match(created.json.key, /^svc_live_/);
  assert.equal(created.json.scopes, ['email:send', 'email:read']);
  state.keyId = created.json.id;
  const row = await ApiKey.findByPk(state.keyId);
  assert.is(row?.tenantId, state.tenantId);
  const list = await cli.run(['keys', 'list', '--json']);
  assert.ok(
    list.json.data.some((key: { id: string; key?: string }) => key.id === state.keyId && key.key === undefined),
  );
  const badScope = await cli.run(['keys', 'create', '--name', 'x', '--scope', 'email:everything']);
  assert.is(badScope.code, 2, 'oclif refuses a scope outside the list');

  const rotated = await cli.run(['keys', 'rotate', state.keyId!, '--json']);
  assert.is(rotated.code, 0, rotated.stderr);
  assert.match(rotated.json.key, /^svc_live_/);
  assert.is.not(rotated.json.key, created.json.key);
  const oldKey = await cli.run(['logs', 'list', '--json'], { env: { SVC_API_KEY: created.json.key } });
  assert.is(oldKey.code, 3, 'the rotated-away secret is refused');
  const newKey = await cli.run(['logs', 'list', '--json'], { env: { SVC_API_KEY: rotated.json.key } });
  assert.is(newKey.code, 0, newKey.stderr);

  const rotatedId = rotated.json.id as string;
  const revoked = await cli.run(['keys', 'revoke', rotatedId, '--json']);
  assert.is(revoked.code, 0, revoked.stderr);
  const after = await cli.run(['logs', 'list', '--json'], { env: { SVC_API_KEY: rotated.json.key } });
  assert.is(after.code, 3);
  assert.is(after.json.error.status, 401);
  const missing = await cli.run(['keys', 'revoke', '00000000-0000-4000-8000-000000000000', '--json']);
  assert.is(missing.code, 1);
  assert.is(missing.json.error.status, 404);
});

test('an expired access token is refreshed on its own and the rotated pair is stored', async () => {
  const before = profile();
  editProfile({ accessToken: 'not-a-valid-token' });
  const run = await cli.run(['whoami', '--json']);
  assert.is(run.code, 0, run.stdout + run.stderr);
  const after = profile();
  assert.is.not(after.accessToken, 'not-a-valid-token');
  assert.is.not(after.refreshToken, before.refreshToken, 'refresh tokens rotate');
});

test('when the refresh fails too: "Your session has expired: run svc login" and exit 3', async () => {
  editProfile({ accessToken: 'not-a-valid-token', refreshToken: 'not-a-valid-refresh-token-0123456789' });
  const run = await cli.run(['tenants', 'list', '--json'], { asScript: true });
  assert.is(run.code, 3);
  assert.is(run.json.error.message, 'Your session has expired: run `node bin/svc.js login`.');
  assert.is(profile().accessToken, undefined, 'dead tokens are forgotten');
});

const clock = new TotpClock();
test.after.each(() => clock.restore());

test('login without a terminal needs --email and --password-stdin, and --code once 2FA is on', async () => {
  const noEmail = await cli.run(['login', '--password-stdin'], { input: PASSWORD });
  assert.is(noEmail.code, 2);
  assert.match(noEmail.stderr, '--email');
  const noPassword = await cli.run(['login', '--email', EMAIL]);
  assert.is(noPassword.code, 2);
  assert.match(noPassword.stderr, '--password-stdin');
  const wrong = await cli.run(['login', '--email', EMAIL, '--password-stdin', '--json'], {
    input: 'wrong-password-123',
  });
  assert.is(wrong.code, 3, wrong.stdout);

  const plain = await cli.run(['login', '--email', EMAIL, '--password-stdin', '--json'], { input: PASSWORD });
  assert.is(plain.code, 0, plain.stdout);
  assert.is(plain.json.tenant.id, state.tenantId, 'the profile keeps its tenant');

  // Turn 2FA on through the API with a code of the previous step, so the login's code is fresh; the clock
  // is pinned to a step (helpers/totp-clock.ts) so no step ends between a code and its check.
  clock.pin();
  const headers = { authorization: `Bearer ${profile().accessToken}` };
  const setup = await ctx.app.inject({ method: 'POST', url: '/auth/2fa/enable', headers });
  assert.is(setup.statusCode, 200, setup.body);
  const secret = setup.json().secret as string;
  const previous = clock.code(secret, -1);
  const confirm = await ctx.app.inject({
    method: 'POST',
    url: '/auth/2fa/verify',
    headers,
    payload: { code: previous },
  });
  assert.is(confirm.statusCode, 200, confirm.body);

  const withoutCode = await cli.run(['login', '--email', EMAIL, '--password-stdin', '--json'], { input: PASSWORD });
  assert.is(withoutCode.code, 2);
  assert.match(withoutCode.json.error.message, '--code');
  const badCode = await cli.run(['login', '--email', EMAIL, '--password-stdin', '--code', '000000', '--json'], {
    input: PASSWORD,
  });
  assert.ok(badCode.code === 3 || badCode.code === 1, `a wrong code is refused (${badCode.code})`);
  clock.pin();
  const code = clock.code(secret, 0);
  const ok = await cli.run(['login', '--email', EMAIL, '--password-stdin', '--code', code, '--json'], {
    input: PASSWORD,
  });
  assert.is(ok.code, 0, ok.stdout + ok.stderr);
  assert.is(ok.json.email, EMAIL);
  const who = await cli.run(['whoami', '--json']);
  assert.is(who.json.twoFactorEnabled, true);
});

test('logout revokes the session on the daemon and forgets the tokens', async () => {
  const refreshToken = profile().refreshToken as string;
  const run = await cli.run(['logout', '--json']);
  assert.is(run.code, 0, run.stderr);
  assert.is(run.json.revoked, true);
  assert.is(profile().accessToken, undefined);
  const reuse = await ctx.app.inject({ method: 'POST', url: '/auth/refresh', payload: { refreshToken } });
  assert.is(reuse.statusCode, 401, 'the refresh token of the session is dead');
  const who = await cli.run(['whoami', '--json']);
  assert.is(who.code, 3);
});

test('an unreachable daemon is exit 4 with a sentence naming the URL', async () => {
  // Spawned: the exit status a shell sees when the binary cannot reach its daemon.
  const run = await cli.spawn(['daemon', 'status', '--json'], { env: { SVC_BASE_URL: 'http://127.0.0.1:9' } });
  assert.is(run.code, 4);
  assert.match(run.json.error.message, 'http://127.0.0.1:9');
});

test.run();
