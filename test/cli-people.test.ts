// svc for people, second pass, against a real daemon: register without a terminal, tenants by name,
// and turning 2FA on and off from the CLI.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { listen } from './helpers/svc-cli.ts';
import { InProcessCli, operationMatchers } from './helpers/svc-inprocess.ts';
import { TotpClock } from './helpers/totp-clock.ts';
import { Admin } from '../daemon/modules/auth/model.ts';

let ctx: TestContext;
let cli: InProcessCli;
const EMAIL = 'people@cli.test';
const PASSWORD = 'correct-horse-battery';
const state: { acme?: string; beta?: string } = {};

test.before(async () => {
  ctx = await createTestContext();
  const document = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  cli = new InProcessCli(await listen(ctx), operationMatchers(document));
});
test.after(async () => {
  cli?.cleanup();
  await ctx?.close();
});

test('register without a terminal and without --password-stdin names the flag (exit 2) and creates nothing', async () => {
  const run = await cli.run(['register', '--email', EMAIL, '--json']);
  assert.is(run.code, 2, run.stdout);
  assert.is(run.json.error.code, 'MISSING_FLAG');
  assert.match(run.json.error.message, '--password-stdin');
  assert.is(await Admin.count(), 0);
  const ok = await cli.run(['register', '--email', EMAIL, '--password-stdin', '--json'], { input: PASSWORD });
  assert.is(ok.code, 0, ok.stdout + ok.stderr);
  assert.not.match(ok.stdout + ok.stderr, PASSWORD);
});

test('tenants create takes the name as an argument; tenants use takes a name (any case) or an id', async () => {
  const acme = await cli.run(['tenants', 'create', 'Acme', '--json']);
  assert.is(acme.code, 0, acme.stdout + acme.stderr);
  assert.is(acme.json.name, 'Acme');
  assert.is(acme.json.current, true);
  state.acme = acme.json.id;
  const beta = await cli.run(['tenants', 'create', 'Beta Corp', '--no-use', '--json']);
  assert.is(beta.json.name, 'Beta Corp');
  state.beta = beta.json.id;
  const byName = await cli.run(['tenants', 'use', 'beta corp', '--json']);
  assert.is(byName.code, 0, byName.stdout);
  assert.is(byName.json.id, state.beta);
  const byId = await cli.run(['tenants', 'use', state.acme!, '--json']);
  assert.is(byId.json.name, 'Acme');
  const unknown = await cli.run(['tenants', 'use', 'Nope', '--json']);
  assert.is(unknown.code, 1);
  assert.is(unknown.json.error.code, 'NOT_A_MEMBER');
  await cli.run(['tenants', 'create', 'Acme', '--no-use', '--json']);
  const ambiguous = await cli.run(['tenants', 'use', 'Acme', '--json']);
  assert.is(ambiguous.code, 2);
  assert.is(ambiguous.json.error.code, 'AMBIGUOUS_NAME');
});

// The daemon (in this process) reads its TOTP step from a pinned clock, so each code is made for a known
// step instead of waiting for a step's end; each is pinned again, as the `svc` runs between take seconds.
const clock = new TotpClock();
test.after.each(() => clock.restore());

test('2fa enable prints the otpauth URL without a terminal, --code finishes it; login then needs a code; disable turns it off', async () => {
  const off = await cli.run(['2fa', 'status', '--json']);
  assert.equal(off.json, { enabled: false, pending: false });
  const started = await cli.run(['2fa', 'enable', '--json']);
  assert.is(started.code, 0, started.stdout + started.stderr);
  assert.is(started.json.enabled, false);
  assert.match(started.json.otpauthUrl, /^otpauth:\/\/totp\//);
  const secret = started.json.secret as string;
  assert.equal((await cli.run(['2fa', 'status', '--json'])).json, { enabled: false, pending: true });
  const human = await cli.run(['2fa', 'status']);
  assert.match(human.stdout, 'svc 2fa enable --code');

  const wrong = await cli.run(['2fa', 'enable', '--code', '000000', '--json']);
  assert.is(wrong.code, 1, wrong.stdout);
  clock.pin();
  const on = await cli.run(['2fa', 'enable', '--code', clock.code(secret, -1), '--json']);
  assert.is(on.code, 0, on.stdout + on.stderr);
  assert.is(on.json.enabled, true);
  assert.equal((await cli.run(['2fa', 'status', '--json'])).json, { enabled: true, pending: false });

  const noCode = await cli.run(['login', '--email', EMAIL, '--password-stdin', '--json'], { input: PASSWORD });
  assert.is(noCode.code, 2);
  clock.pin();
  const signedIn = await cli.run(
    ['login', '--email', EMAIL, '--password-stdin', '--code', clock.code(secret, 0), '--json'],
    { input: PASSWORD },
  );
  assert.is(signedIn.code, 0, signedIn.stdout + signedIn.stderr);

  const missing = await cli.run(['2fa', 'disable', '--json']);
  assert.is(missing.code, 2);
  clock.pin();
  const disabled = await cli.run(['2fa', 'disable', '--code', clock.code(secret, 1), '--json']);
  assert.is(disabled.code, 0, disabled.stdout + disabled.stderr);
  assert.equal((await cli.run(['2fa', 'status', '--json'])).json, { enabled: false, pending: false });
});

test('2fa enable in human mode draws the QR code in the terminal', async () => {
  const run = await cli.run(['2fa', 'enable']);
  assert.is(run.code, 0, run.stderr);
  assert.match(run.stdout, /[▀▄█]/);
  assert.match(run.stdout, 'svc 2fa enable --code');
});

test.run();
