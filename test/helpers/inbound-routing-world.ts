// The world of test/inbound-routing*.test.ts (issue 52): Debian's swaks as the sending server against
// the real inbound listener, routes made through the API, a real webhook receiver fed by the webhook
// worker's own dispatcher, the test DNS server for MX checks and the verdicts. Its bindings are live
// (ES module exports): set by setUp(), read by the tests.
import * as assert from 'uvu/assert';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './context.ts';
import { createWorld } from './fixtures.ts';
import { freePort, swaks } from './swaks.ts';
import { startDnsServer, type TestDnsServer } from './dns-server.ts';
import { startReceiver, type Receiver } from './webhook-receiver.ts';
import { startInboundServer } from '../../daemon/smtp/inbound.ts';

export let ctx: TestContext;
export let dns: TestDnsServer;
export let receiver: Receiver;
export let inbound: { port: number; stop(): Promise<void> };
export let world: Awaited<ReturnType<typeof createWorld>>;
export let endpoint: { id: string; secret: string };
export const scratch = mkdtempSync(join(tmpdir(), 'svc-inbound-routing-'));

/** The world of both files: a tenant with a webhook endpoint, the listener on a free port. */
export async function setUp(): Promise<void> {
  dns = await startDnsServer();
  receiver = await startReceiver();
  const port = await freePort();
  ctx = await createTestContext({
    env: { PUBLIC_URL: 'http://mail.example.test', SMTP_INBOUND_PORT: String(port), DNS_SERVERS: dns.address },
  });
  world = await createWorld(ctx.app);
  const created = await ctx.app.inject({
    method: 'POST',
    url: '/webhooks/endpoints',
    headers: world.asKey,
    payload: { url: receiver.url, events: ['inbound.received'] },
  });
  assert.is(created.statusCode, 201, created.body);
  endpoint = created.json();
  const log = { info: () => {}, warn: () => {} };
  inbound = (await startInboundServer({
    config: ctx.config,
    db: ctx.db,
    secrets: ctx.deps.secrets,
    log,
    redis: ctx.deps.redis,
    redisPrefix: ctx.deps.redisPrefix,
  }))!;
}

export async function tearDown(): Promise<void> {
  await inbound?.stop();
  await ctx?.close();
  await receiver?.close();
  await dns?.close();
}

export const q = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
  ctx.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });

export async function api(
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  payload?: object,
  headers: Record<string, string> = world.asKey,
) {
  return ctx.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
}

/** An inbound domain of the tenant, its MX published and checked. */
export async function verifiedDomain(name: string, headers = world.asKey): Promise<string> {
  dns.zone.mx.set(name, [{ exchange: 'mail.example.test', priority: 10 }]);
  const added = await api('POST', '/inbound/domains', { name }, headers);
  assert.is(added.statusCode, 201, added.body);
  const verified = await api('POST', `/inbound/domains/${added.json().id}/verify`, undefined, headers);
  assert.is(verified.statusCode, 200, verified.body);
  assert.is(verified.json().status, 'verified', verified.body);
  return added.json().id;
}

export async function addRoute(body: object, headers = world.asKey) {
  const created = await api('POST', '/inbound/routes', body, headers);
  assert.is(created.statusCode, 201, created.body);
  return created.json() as { id: string; address: string };
}

export function send(to: string[], extra: string[] = []) {
  return swaks(inbound.port, ['--from', 'ann@sender.example', ...to.flatMap((t) => ['--to', t]), ...extra]);
}
