// A per-tenant throttle is applied by the MTA's shaping (direct delivery); through a relay nothing paces
// the tenant's mail, so the setting is refused with a 409 that says so rather than answering 200 and
// doing nothing (issue 48 §5). Against a real relay (an SMTP sink): the throttle is not stored, the
// CLI shows the refusal, lifting one is still accepted, and the tenant's mail goes to the relay as before.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { addVerifiedDomain, createAdmin, createApiKey, createTenant } from './helpers/fixtures.ts';
import { assertErrorBody } from './helpers/error-body.ts';
import { runJobs } from './helpers/send-jobs.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp-sink.ts';
import { listen } from './helpers/svc-cli.ts';
import { InProcessCli, operationMatchers } from './helpers/svc-inprocess.ts';
import { loadTenantThrottles } from '../daemon/mta/sql/throttles.ts';

let ctx: TestContext;
let sink: SmtpSink;
let cli: InProcessCli;

test.before(async () => {
  sink = await startSmtpSink();
  ctx = await createTestContext({ env: { SMTP_URL: `smtp://127.0.0.1:${sink.port}` } });
  const document = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  cli = new InProcessCli(await listen(ctx), operationMatchers(document));
});
test.after(async () => {
  cli?.cleanup();
  await ctx?.close();
  await sink?.close();
});

test('through a relay a throttle is refused (409, says why); lifting is accepted; mail still reaches the relay', async () => {
  const root = await createAdmin(ctx.app, { platformAdmin: true });
  const owner = await createAdmin(ctx.app);
  const tenantId = await createTenant(owner.id, 'Acme');
  cli.writeProfile({ accessToken: root.token, tenantId, tenantName: 'Acme', email: root.email });
  const admin = { authorization: `Bearer ${root.token}` };
  const put = (payload: object) =>
    ctx.app.inject({ method: 'PUT', url: `/platform/tenants/${tenantId}/throttle`, headers: admin, payload });

  const refused = await put({ messagesPerSecond: 1, messagesPerHour: null });
  assertErrorBody(refused, 409, 'THROTTLE_NEEDS_DIRECT_DELIVERY');
  assert.match(
    refused.json().message,
    'throttles apply to direct delivery; this platform delivers through a relay (DELIVERY=relay)',
  );
  assertErrorBody(await put({ messagesPerSecond: null, messagesPerHour: 100 }), 409);
  assert.equal(await loadTenantThrottles(ctx.db.sql), [], 'nothing stored');
  const viaCli = await cli.run(['tenants', 'throttle', tenantId, '--per-second', '1', '--json']);
  assert.is.not(viaCli.code, 0);
  assert.match(viaCli.stdout + viaCli.stderr, 'throttles apply to direct delivery');
  const lifted = await put({ messagesPerSecond: null, messagesPerHour: null });
  assert.is(lifted.statusCode, 200, lifted.body);
  assert.equal(lifted.json(), { tenantId, messagesPerSecond: null, messagesPerHour: null });

  // The tenant's mail goes to the relay as it did: nothing claims to pace it.
  await addVerifiedDomain(ctx.db.sequelize, ctx.deps.secrets, tenantId, 'acme.test');
  const key = await createApiKey(tenantId);
  for (let i = 0; i < 3; i++) {
    const sent = await ctx.app.inject({
      method: 'POST',
      url: '/emails/send',
      headers: { authorization: `Bearer ${key.key}` },
      payload: { from: 'hello@acme.test', to: `user${i}@example.org`, subject: `n${i}`, textBody: 'hi' },
    });
    assert.is(sent.statusCode, 202, sent.body);
  }
  await runJobs(ctx, 'send');
  for (let i = 0; i < 3; i++) await sink.waitFor((m) => m.rcptTo.includes(`user${i}@example.org`));
});

test.run();
