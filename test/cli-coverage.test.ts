// Every admin operation of /openapi.json is reachable from a hand-made svc command: each command declares
// the operationIds it calls (`static operations`, kept true by the in-process runner, which fails a command
// that calls one it does not declare), and this file fails for an admin operation no command declares.
// `svc api <operationId>` reaches the rest by design; it counts only for GENERIC_ONLY, which is empty today.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createAdmin, createTenant } from './helpers/fixtures.ts';
import { listen } from './helpers/svc-cli.ts';
import { IMPLICIT_OPERATIONS, InProcessCli, operationMatchers } from './helpers/svc-inprocess.ts';
import { COMMANDS } from '../cli/commands.ts';

/** Operations that are not admin operations, and why. */
const NOT_ADMIN: Record<string, string> = {
  getTOByToken: 'tracking pixel, fetched by mail clients',
  getTCByToken: 'click redirect, followed by recipients',
  getUByToken: 'unsubscribe page, opened by recipients',
  postUByToken: 'one-click unsubscribe (RFC 8058), posted by mail clients',
  postWebhooksSes: "provider receiver (SES through SNS), authenticated by the provider's token",
  postWebhooksSmtpDsn: 'provider receiver (delivery reports), authenticated by INBOUND_WEBHOOK_TOKEN',
  postBillingWebhook: "Stripe's event receiver, authenticated by Stripe's signature",
  getHealth: 'liveness probe for load balancers and systemd (`svc daemon status` reads /health/ready)',
  getHealthDb: 'probe for load balancers; /health/ready, which `svc daemon status` shows, runs the same check',
  getHealthRedis: 'probe for load balancers; /health/ready, which `svc daemon status` shows, runs the same check',
  getInboundAttachmentsByToken:
    "an attachment's signed link in an inbound.received webhook, fetched by the application",
  getMetrics: "scraped by Prometheus; `svc doctor` reports the same event-loop delay from the daemon's own monitor",
};

/** Admin operations only `svc api` reaches, and why (none today: keep it short and justified). */
const GENERIC_ONLY: Record<string, string> = {};

let ctx: TestContext;
let document: any;
let cli: InProcessCli;

test.before(async () => {
  ctx = await createTestContext();
  document = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  cli = new InProcessCli(await listen(ctx), operationMatchers(document));
});
test.after(async () => {
  cli?.cleanup();
  await ctx?.close();
});

function operationIds(): string[] {
  return Object.values(document.paths as Record<string, Record<string, { operationId: string }>>).flatMap((methods) =>
    Object.values(methods).map((operation) => operation.operationId),
  );
}

function declared(): Map<string, string[]> {
  const byOperation = new Map<string, string[]>();
  for (const [id, command] of Object.entries(COMMANDS)) {
    for (const operation of (command as { operations?: readonly string[] }).operations ?? [])
      byOperation.set(operation, [...(byOperation.get(operation) ?? []), id]);
  }
  for (const operation of IMPLICIT_OPERATIONS) byOperation.set(operation, ['(every command: token refresh)']);
  return byOperation;
}

test('every admin operation of /openapi.json is reached by a hand-made command', () => {
  const all = operationIds();
  const reached = declared();
  const admin = all.filter((id) => !(id in NOT_ADMIN));
  const missing = admin.filter((id) => !reached.has(id) && !(id in GENERIC_ONLY));
  assert.equal(missing, [], `admin operations no svc command reaches: ${missing.join(', ')}`);
  const handMade = admin.filter((id) => reached.has(id)).length;
  // The figure the README and the changelog quote.
  console.log(`svc reaches ${handMade} of ${admin.length} admin operations (${all.length} in /openapi.json)`);
  assert.ok(admin.length >= 120, `${admin.length} admin operations`);
});

test('every declared operation exists in /openapi.json, and the exception lists name real operations', () => {
  const all = new Set(operationIds());
  const stale = [...declared().keys()].filter((id) => !all.has(id));
  assert.equal(stale, [], `commands declare operations the daemon does not have: ${stale.join(', ')}`);
  for (const id of [...Object.keys(NOT_ADMIN), ...Object.keys(GENERIC_ONLY)]) assert.ok(all.has(id), id);
  const reachedAnyway = Object.keys(GENERIC_ONLY).filter((id) => declared().has(id));
  assert.equal(reachedAnyway, [], 'a GENERIC_ONLY operation now has a command: take it off the list');
});

test('svc api --list lists every operation of the daemon; svc api calls one by operationId', async () => {
  const list = await cli.run(['api', '--list', '--json']);
  assert.is(list.code, 0, list.stderr);
  assert.is(list.json.length, operationIds().length);
  const registration = list.json.find((o: { operationId: string }) => o.operationId === 'getAuthRegistrationStatus');
  assert.equal(
    { method: registration.method, path: registration.path, authenticated: registration.authenticated },
    { method: 'GET', path: '/auth/registration-status', authenticated: false },
  );
  const status = await cli.run(['api', 'getAuthRegistrationStatus', '--json']);
  assert.is(status.code, 0, status.stderr);
  assert.equal(status.json, { open: true, hasAdmins: false });
  assert.equal(status.operations, ['GET /openapi.json', 'getAuthRegistrationStatus']);
});

test('svc api fills {tenantId} from the profile, sends query parameters and a JSON body, and keeps the exit codes', async () => {
  const owner = await createAdmin(ctx.app);
  const tenantId = await createTenant(owner.id, 'Generic');
  const env = { SVC_TENANT_ID: tenantId };
  cli.writeProfile({ accessToken: owner.token });
  const created = await cli.run(
    ['api', 'postContactTags', '--body', '{"name":"vip","description":"paying"}', '--json'],
    { env },
  );
  assert.is(created.code, 0, created.stdout + created.stderr);
  assert.is(created.json.name, 'vip');
  const tags = await cli.run(['api', 'getContactTags', '--json'], { env });
  assert.equal(
    tags.json.data.map((t: { name: string; description: string }) => [t.name, t.description]),
    [['vip', 'paying']],
  );
  const members = await cli.run(['api', 'getTenantsByTenantIdMembers', '-p', 'limit=1', '--json'], { env });
  assert.is(members.code, 0, members.stderr);
  assert.equal(members.json.meta.limit, 1);
  assert.is(members.json.data[0].email, owner.email);
  const duplicate = await cli.run(['api', 'postContactTags', '--body', '{"name":"vip"}', '--json'], { env });
  assert.is(duplicate.code, 1);
  assert.is(duplicate.json.error.status, 409);
  const invalid = await cli.run(['api', 'postContactTags', '--body', '{"name":"Not Valid"}', '--json'], { env });
  assert.is(invalid.json.error.code, 'VALIDATION_FAILED');
  assert.ok(invalid.json.error.details.length > 0);
  const unknown = await cli.run(['api', 'getContactTag', '--json'], { env });
  assert.is(unknown.code, 2);
  assert.is(unknown.json.error.code, 'UNKNOWN_OPERATION');
  assert.match(unknown.json.error.message, 'getContactTags');
  const badParam = await cli.run(['api', 'getContactTags', '-p', 'nope=1', '--json'], { env });
  assert.is(badParam.code, 2);
  assert.not.match(JSON.stringify([created, tags, duplicate, invalid]), owner.token);
});

test.run();
