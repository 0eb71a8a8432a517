// Tenant isolation over every registered tenant-scoped route (read from the app's OpenAPI, so
// routes added by any area are covered): another tenant's admin gets 403, another tenant's key
// gets 403/404, and list answers never carry the other tenant's data.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomUUID } from 'node:crypto';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { addMember, createAdmin, createApiKey, createTenant, createWorld } from './helpers/fixtures.ts';
import { AuditEvent } from '../daemon/modules/audit/model.ts';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
interface RouteUnderTest {
  method: Method;
  path: string;
  url: string;
  pathTenant: boolean;
  /** Long-lived answers (server-sent events) never end inside inject; only their refusal is tested. */
  streaming: boolean;
}

/** Routes outside any tenant: sign-in, the admin's own tenant list, platform settings, health. */
const NOT_TENANT_SCOPED = [/^\/auth(\/|$)/, /^\/health(\/|$)/, /^\/platform(\/|$)/, /^\/tenants$/];

let ctx: TestContext;
const routes: RouteUnderTest[] = [];
let victim: Awaited<ReturnType<typeof createWorld>>;
let intruder: Awaited<ReturnType<typeof createWorld>>;
let victimKeyPrefix = '';

test.before(async () => {
  ctx = await createTestContext();
  victim = await createWorld(ctx.app);
  intruder = await createWorld(ctx.app);
  const colleague = await createAdmin(ctx.app, { email: `victim-colleague-${randomUUID().slice(0, 6)}@example.test` });
  await addMember(victim.tenantId, colleague.id, 'developer');
  const extraKey = await createApiKey(victim.tenantId, { environment: 'test' });
  victimKeyPrefix = extraKey.key.slice(0, 21);
  await AuditEvent.create({
    tenantId: victim.tenantId,
    action: 'tenant.updated',
    adminId: victim.owner.id,
    target: victim.tenantId,
  });
  // A second tenant of the intruder, so list answers have rows of their own.
  await createTenant(intruder.owner.id, 'Intruder Two');

  const spec = ctx.app.swagger() as { paths: Record<string, Record<string, { security?: unknown[] }>> };
  for (const [path, operations] of Object.entries(spec.paths)) {
    if (NOT_TENANT_SCOPED.some((pattern) => pattern.test(path))) continue;
    for (const [method, operation] of Object.entries(operations)) {
      if (!operation.security?.length) continue; // public (security: []): health, tracking, unsubscribe, provider receivers
      const url = path.replace(/\{tenantId\}/g, victim.tenantId).replace(/\{[^}]+\}/g, randomUUID());
      const streaming = JSON.stringify(operation).includes('text/event-stream');
      routes.push({
        method: method.toUpperCase() as Method,
        path,
        url,
        pathTenant: path.includes('{tenantId}'),
        streaming,
      });
    }
  }
});
test.after(async () => {
  await ctx?.close();
});

function payloadFor(method: Method) {
  return method === 'GET' || method === 'DELETE' ? undefined : {};
}

test('the route table is not empty and includes the tenant routes', () => {
  assert.ok(routes.length >= 15, `found ${routes.length} routes`);
  assert.ok(routes.some((r) => r.path === '/tenants/{tenantId}/api-keys' && r.method === 'POST'));
  assert.ok(routes.some((r) => r.path === '/tenants/{tenantId}/members' && r.method === 'GET'));
});

test("another tenant's admin gets 403 on every tenant-scoped route", async () => {
  const failures: string[] = [];
  for (const route of routes) {
    const headers = { authorization: `Bearer ${intruder.owner.token}`, 'x-tenant-id': victim.tenantId };
    const res = await ctx.app.inject({
      method: route.method,
      url: route.url,
      headers,
      payload: payloadFor(route.method),
    });
    if (res.statusCode !== 403)
      failures.push(`${route.method} ${route.path} → ${res.statusCode} ${res.body.slice(0, 120)}`);
  }
  assert.equal(failures, [], failures.join('\n'));
});

test("another tenant's API key gets 403 or 404 on every tenant-scoped route", async () => {
  const failures: string[] = [];
  for (const route of routes) {
    for (const headers of [
      { authorization: `Bearer ${intruder.key.key}`, 'x-tenant-id': victim.tenantId },
      // Without the header the key means its own tenant; path-tenant routes must still refuse.
      ...(route.pathTenant ? [{ authorization: `Bearer ${intruder.key.key}` }] : []),
    ]) {
      const res = await ctx.app.inject({
        method: route.method,
        url: route.url,
        headers,
        payload: payloadFor(route.method),
      });
      if (res.statusCode !== 403 && res.statusCode !== 404) {
        failures.push(
          `${route.method} ${route.path} (${'x-tenant-id' in headers ? 'with' : 'without'} header) → ${res.statusCode} ${res.body.slice(0, 120)}`,
        );
      }
      if (res.body.includes(victim.tenantId) && res.statusCode < 400)
        failures.push(`${route.method} ${route.path} leaked the tenant id`);
    }
  }
  assert.equal(failures, [], failures.join('\n'));
});

test("reads inside one's own tenant never carry the other tenant's data", async () => {
  const leaks: string[] = [];
  const markers = [victim.tenantId, victim.owner.email, victimKeyPrefix, victim.key.key.slice(0, 21)];
  const reads = routes.filter((r) => r.method === 'GET' && !r.streaming && !/\{(?!tenantId)[^}]+\}/.test(r.path));
  for (const route of reads) {
    const url = route.url.replace(victim.tenantId, intruder.tenantId);
    for (const headers of [
      { authorization: `Bearer ${intruder.owner.token}`, 'x-tenant-id': intruder.tenantId },
      { authorization: `Bearer ${intruder.key.key}` },
    ]) {
      const res = await ctx.app.inject({ method: 'GET', url, headers });
      for (const marker of markers) {
        if (res.body.includes(marker)) leaks.push(`${route.path} (${res.statusCode}) contains ${marker.slice(0, 12)}…`);
      }
    }
  }
  const list = await ctx.app.inject({
    method: 'GET',
    url: '/tenants',
    headers: { authorization: `Bearer ${intruder.owner.token}` },
  });
  assert.is(list.json().meta.total, 2);
  assert.not.ok(list.body.includes(victim.tenantId));
  assert.equal(leaks, [], leaks.join('\n'));
});

test('a key used with its own tenant id in the header works; with a malformed header it is 400', async () => {
  const own = await ctx.app.inject({
    method: 'GET',
    url: `/tenants/${intruder.tenantId}`,
    headers: { authorization: `Bearer ${intruder.owner.token}` },
  });
  assert.is(own.statusCode, 200);
  const bad = routes.find((r) => !r.pathTenant && r.method === 'GET');
  if (bad) {
    const res = await ctx.app.inject({
      method: 'GET',
      url: bad.url,
      headers: { authorization: `Bearer ${intruder.owner.token}`, 'x-tenant-id': 'nope' },
    });
    assert.is(res.statusCode, 400);
  }
});

test.run();
