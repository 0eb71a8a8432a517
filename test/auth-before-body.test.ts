// Credentials before the body (issue 48 §1): a request refused for its credentials, scope or tenant
// is answered without its body being read, on every authenticated route with a body. The body is a
// stream that counts what is pulled from it: were the access check ever moved after parsing again,
// the whole 10 MB would be pulled and these tests fail. Also each route's own body limit named in
// its 413, and hostile JSON (a million keys, deep nesting) refused while it arrives.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Readable } from 'node:stream';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createAdmin, createApiKey, createWorld } from './helpers/fixtures.ts';
import { assertErrorBody } from './helpers/error-body.ts';
import { waitFor } from './helpers/wait.ts';

let ctx: TestContext;
let world: Awaited<ReturnType<typeof createWorld>>;
test.before(async () => {
  ctx = await createTestContext({ env: { RATE_LIMIT_MAX: '100000' } });
  world = await createWorld(ctx.app);
});
test.after(async () => {
  await ctx?.close();
});

const TEN_MB = 10 * 1024 * 1024;
/** What a body refused half-way may have pulled past the refusal: the streams' own read-ahead. */
const READ_AHEAD_BYTES = 256 * 1024;

/** A body of `total` bytes made as it is read (64 KB at a time), counting the bytes pulled. */
function countingBody(total: number, piece: (index: number) => string): { stream: Readable; pulled: () => number } {
  let made = 0;
  let index = 0;
  const stream = new Readable({
    read() {
      if (made >= total) return void this.push(null);
      let chunk = '';
      while (chunk.length < 64 * 1024) chunk += piece(index++);
      const bytes = Buffer.from(chunk).subarray(0, total - made);
      made += bytes.length;
      this.push(bytes);
    },
  });
  return { stream, pulled: () => made };
}

/** `{"data":{"k0":1,"k1":1,…` for as long as it is read (the hostile body of issue 48). */
const manyKeys = (total: number) => countingBody(total, (i) => (i === 0 ? '{"data":{"k0":1' : `,"k${i}":1`));

function jsonRequest(method: string, url: string, headers: Record<string, string>, total: number) {
  const body = manyKeys(total);
  return {
    body,
    options: {
      method: method as 'POST',
      url,
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(total) },
      payload: body.stream,
    },
  };
}

/** Every authenticated route that takes a JSON body, from the API's own description. */
async function authenticatedBodyRoutes(): Promise<{ method: string; url: string }[]> {
  const doc = (await ctx.app.inject({ url: '/openapi.json' })).json() as {
    paths: Record<string, Record<string, { security?: unknown[]; requestBody?: unknown }>>;
  };
  const routes: { method: string; url: string }[] = [];
  for (const [path, operations] of Object.entries(doc.paths))
    for (const [method, operation] of Object.entries(operations))
      if (operation.requestBody && operation.security?.length)
        routes.push({
          method: method.toUpperCase(),
          url: path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000'),
        });
  return routes;
}

test('no credentials: every authenticated route with a body answers 401 without reading it', async () => {
  const routes = await authenticatedBodyRoutes();
  assert.ok(routes.length > 40, `only ${routes.length} routes found`);
  for (const route of routes) {
    const { body, options } = jsonRequest(route.method, route.url, {}, TEN_MB);
    const res = await ctx.app.inject(options);
    const error = assertErrorBody(res, 401, 'UNAUTHORIZED');
    assert.match(error.message, /Authorization/, `${route.method} ${route.url}`);
    assert.is(body.pulled(), 0, `${route.method} ${route.url} read ${body.pulled()} bytes`);
    // The unread rest is not read either: the connection closes instead of draining it.
    assert.is(res.headers.connection, 'close', `${route.method} ${route.url}`);
  }
});

test('a bad key, a key without the scope, a key of another tenant, a non-member: refused before the body', async () => {
  const readOnly = await createApiKey(world.tenantId, { scopes: ['email:read'] });
  const stranger = await createAdmin(ctx.app);
  const cases: [Record<string, string>, number, string][] = [
    [{ authorization: 'Bearer svc_live_notakeynotakeynotakeynotakey0000' }, 401, 'UNAUTHORIZED'],
    [{ authorization: 'Bearer not.a.jwt' }, 401, 'UNAUTHORIZED'],
    [{ authorization: `Bearer ${readOnly.key}` }, 403, 'INSUFFICIENT_SCOPE'],
    [{ ...world.asKey, 'x-tenant-id': '00000000-0000-4000-8000-000000000000' }, 403, 'TENANT_MISMATCH'],
    [{ authorization: `Bearer ${stranger.token}`, 'x-tenant-id': world.tenantId }, 403, 'NOT_A_MEMBER'],
  ];
  for (const [headers, status, code] of cases) {
    const { body, options } = jsonRequest('POST', '/emails/send', headers, TEN_MB);
    const res = await ctx.app.inject(options);
    assertErrorBody(res, status, code);
    assert.is(body.pulled(), 0, `${code}: read ${body.pulled()} bytes`);
  }
});

test('authenticated, a million keys: 413 naming the member limit, refused after a small part of the body', async () => {
  const { body, options } = jsonRequest('POST', '/emails/send', world.asKey, TEN_MB);
  const res = await ctx.app.inject(options);
  const error = assertErrorBody(res, 413, 'BODY_TOO_LARGE');
  assert.match(error.message, 'more than the 10,000 members');
  assert.equal(error.details, [{ field: '(body)', message: 'holds more than 10,000 members' }]);
  // 10,000 members of `,"k1234":1` are about 100 KB.
  assert.ok(body.pulled() < 100 * 1024 + READ_AHEAD_BYTES, `read ${body.pulled()} bytes of 10 MB`);
  assert.is(res.headers.connection, 'close');
});

test('authenticated, nested ten million levels deep: 400 naming the field, refused at the 33rd level', async () => {
  const deep = countingBody(TEN_MB, (i) => (i === 0 ? '{"from":"a@acme.test","metadata":' : '{"a":'));
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: { ...world.asKey, 'content-type': 'application/json', 'content-length': String(TEN_MB) },
    payload: deep.stream,
  });
  const error = assertErrorBody(res, 400, 'VALIDATION_FAILED');
  assert.match(error.message, 'nests deeper than 32 levels');
  assert.is(error.details?.[0]?.field, 'metadata.a.a.a.a.a.a.a');
  assert.ok(deep.pulled() <= READ_AHEAD_BYTES, `read ${deep.pulled()} bytes`);
});

test("each route's 413 names that route's own limit", async () => {
  const cases: [string, string, Record<string, string>, number, RegExp][] = [
    ['POST', '/tenants', world.asOwner, 64 * 1024 + 1, /larger than the 64 KB \(65,536 bytes\)/],
    ['POST', '/emails/send', world.asKey, 15 * 1024 * 1024 + 1, /larger than the 15 MB \(15,728,640 bytes\)/],
    ['POST', '/emails/batch', world.asKey, 15 * 1024 * 1024 + 1, /15 MB/],
    ['POST', '/templates', world.asKey, 4 * 1024 * 1024 + 1, /larger than the 4 MB/],
    ['POST', '/contacts/bulk', world.asKey, 1024 * 1024 + 1, /larger than the 1 MB/],
    ['DELETE', '/suppressions/00000000-0000-4000-8000-000000000000', world.asKey, 1025, /larger than the 1 KB/],
  ];
  for (const [method, url, headers, total, message] of cases) {
    // Declared by Content-Length: refused before a byte is read.
    const declared = jsonRequest(method, url, headers, total);
    const res = await ctx.app.inject(declared.options);
    const error = assertErrorBody(res, 413, 'BODY_TOO_LARGE');
    assert.match(error.message, message, `${method} ${url}`);
    assert.is(declared.body.pulled(), 0, `${method} ${url}`);
  }
  // Sent without a length (chunked): counted as it comes, refused at the limit.
  const body = countingBody(128 * 1024, (i) => (i === 0 ? '{"name":"' : 'x'));
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/tenants',
    headers: { ...world.asOwner, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    payload: body.stream,
  });
  assert.match(assertErrorBody(res, 413, 'BODY_TOO_LARGE').message, '64 KB');
  assert.is(
    (await ctx.app.inject({ method: 'GET', url: `/tenants/${world.tenantId}`, headers: world.asOwner })).statusCode,
    200,
  );
});

test('routes take what they need: a 1.8 MB template (1 MB before), 1000 contacts of 12 members each', async () => {
  // Two bodies of 450,000 characters (Liquid parses up to 500,000), two bytes each in UTF-8.
  const html = `<p>${'é'.repeat(450_000)}</p>`;
  const text = 'ü'.repeat(450_000);
  const template = await ctx.app.inject({
    method: 'POST',
    url: '/templates',
    headers: world.asKey,
    payload: { name: 'Big', slug: 'big', editorMode: 'html', subject: 'Hi', htmlBody: html, textBody: text },
  });
  assert.is(template.statusCode, 201, template.body.slice(0, 300));
  const [stored] = (await ctx.db.sequelize.query(
    `SELECT length(html_body) AS html, length(text_body) AS text FROM template_versions WHERE template_id = :id`,
    { replacements: { id: template.json().id }, type: 'SELECT' },
  )) as { html: number; text: number }[];
  assert.equal(stored, { html: html.length, text: text.length });

  const contacts = Array.from({ length: 1000 }, (_, i) => ({
    email: `c${i}@example.test`,
    firstName: 'Ana',
    tags: ['a', 'b'],
    attributes: { plan: 'pro', seats: i, city: 'Lisbon', team: 'x', since: 2020 },
  }));
  const bulk = await ctx.app.inject({
    method: 'POST',
    url: '/contacts/bulk',
    headers: world.asKey,
    payload: { contacts },
  });
  assert.is(bulk.statusCode, 200, bulk.body.slice(0, 300));
  const rows = bulk.json().results as { status: string }[];
  assert.is(rows.filter((row) => row.status === 'created').length, 1000);
  const [{ count }] = (await ctx.db.sequelize.query(
    `SELECT count(*)::int AS count FROM contacts WHERE tenant_id = :t`,
    {
      replacements: { t: world.tenantId },
      type: 'SELECT',
    },
  )) as { count: number }[];
  assert.is(count, 1000);
});

test('over a socket: an early 401 closes the connection; answered requests keep it alive', async () => {
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as AddressInfo;
  const socket = connect(port, '127.0.0.1');
  let received = '';
  let closed = false;
  socket.on('data', (chunk) => (received += chunk.toString('latin1')));
  socket.once('close', () => (closed = true));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  // Two health checks on one connection: kept alive between them.
  socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n');
  await waitFor('two answers on one connection', () => (received.match(/HTTP\/1\.1 200/g) ?? []).length === 2);
  assert.not.match(received, /connection: close/i);
  // Then a 10 MB send without credentials, of which only the first kilobyte is ever written.
  received = '';
  socket.write(
    `POST /emails/send HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${TEN_MB}\r\n\r\n{"data":{"k0":1`,
  );
  socket.write(',"k":1'.repeat(170));
  await waitFor('the daemon to answer and close the connection', () => closed, {
    details: () => received.slice(0, 300),
  });
  assert.match(received, /^HTTP\/1\.1 401 /);
  assert.match(received, /connection: close/i);
  assert.match(received, /"code":"UNAUTHORIZED"/);
});

test.run();
