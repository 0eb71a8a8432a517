// The table of bad requests: each gets the right status and CONTRACT.md's error body, never a 500.
import { test } from 'uvu';
import type { InjectOptions } from 'fastify';
import * as assert from 'uvu/assert';
import { randomUUID } from 'node:crypto';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createWorld } from './helpers/fixtures.ts';
import { assertErrorBody } from './helpers/error-body.ts';

let ctx: TestContext;
let world: Awaited<ReturnType<typeof createWorld>>;
test.before(async () => {
  ctx = await createTestContext({ env: { RATE_LIMIT_MAX: '100000' } });
  world = await createWorld(ctx.app);
});
test.after(async () => {
  await ctx?.close();
});

const json = { 'content-type': 'application/json' };
const nested = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);

interface Case {
  name: string;
  request: () => InjectOptions;
  status: number;
  code: string;
  check?: (body: Record<string, any>) => void;
}

const CASES: Case[] = [
  {
    name: 'malformed JSON',
    request: () => ({
      method: 'POST',
      url: '/tenants',
      headers: { ...world.asOwner, ...json },
      payload: '{"name": "Acme"',
    }),
    status: 400,
    code: 'INVALID_JSON',
  },
  {
    name: 'JSON content type with an empty body',
    request: () => ({ method: 'POST', url: '/tenants', headers: { ...world.asOwner, ...json }, payload: '' }),
    status: 400,
    code: 'INVALID_JSON',
  },
  {
    name: 'unknown route',
    request: () => ({ method: 'GET', url: '/no/such/route?x=1' }),
    status: 404,
    code: 'ROUTE_NOT_FOUND',
    check: (body) => assert.match(body.message, 'GET /no/such/route'),
  },
  {
    name: 'unknown method on a known path',
    request: () => ({ method: 'PUT', url: '/health', headers: json, payload: '{}' }),
    status: 404,
    code: 'ROUTE_NOT_FOUND',
  },
  {
    name: 'body over 1 MB',
    request: () => ({
      method: 'POST',
      url: '/tenants',
      headers: { ...world.asOwner, ...json },
      payload: JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) }),
    }),
    status: 413,
    code: 'BODY_TOO_LARGE',
  },
  {
    name: 'wrong content type',
    request: () => ({
      method: 'POST',
      url: '/tenants',
      headers: { ...world.asOwner, 'content-type': 'text/plain' },
      payload: 'name=Acme',
    }),
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
  },
  {
    name: 'form-encoded body',
    request: () => ({
      method: 'POST',
      url: '/tenants',
      headers: { ...world.asOwner, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'name=Acme',
    }),
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
  },
  {
    name: 'validation: missing and unknown fields, each named',
    request: () => ({ method: 'POST', url: '/tenants', headers: { ...world.asOwner, ...json }, payload: { bogus: 1 } }),
    status: 400,
    code: 'VALIDATION_FAILED',
    check: (body) => {
      const fields = body.details.map((detail: { field: string }) => detail.field).sort();
      assert.equal(fields, ['bogus', 'name']);
      assert.ok(body.details.every((detail: { message: string }) => detail.message.length > 3));
    },
  },
  {
    name: 'validation: body is an array instead of an object',
    request: () => ({ method: 'POST', url: '/tenants', headers: { ...world.asOwner, ...json }, payload: '[1,2]' }),
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'validation: a path parameter that is not a UUID',
    request: () => ({ method: 'GET', url: '/tenants/not-a-uuid', headers: world.asOwner }),
    status: 400,
    code: 'VALIDATION_FAILED',
    check: (body) => assert.match(body.details[0].field, /^params\.tenantId/),
  },
  {
    name: 'validation: query out of range',
    request: () => ({
      method: 'GET',
      url: `/tenants/${world.tenantId}/audit-events?page=0&limit=100000`,
      headers: world.asOwner,
    }),
    status: 400,
    code: 'VALIDATION_FAILED',
    check: (body) => {
      const fields = body.details.map((detail: { field: string }) => detail.field).sort();
      assert.equal(fields, ['querystring.limit', 'querystring.page']);
    },
  },
  {
    name: 'validation: a query number that is not finite (ajv would coerce it to Infinity)',
    request: () => ({ method: 'GET', url: '/suppressions?page=1e309&limit=Infinity', headers: world.asKey }),
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'validation: a page number past any real page',
    request: () => ({ method: 'GET', url: '/suppressions?page=100000000000000000000', headers: world.asKey }),
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'X-Tenant-Id that is not a UUID',
    request: () => ({
      method: 'GET',
      url: '/webhooks/endpoints',
      headers: { ...world.asOwner, 'x-tenant-id': 'acme' },
    }),
    status: 400,
    code: 'VALIDATION_FAILED',
    check: (body) => assert.equal(body.details, [{ field: 'headers.x-tenant-id', message: 'must be a UUID' }]),
  },
  {
    name: 'tenant route with a JWT and no X-Tenant-Id',
    request: () => ({
      method: 'GET',
      url: '/webhooks/endpoints',
      headers: { authorization: world.asOwner.authorization },
    }),
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'X-Tenant-Id of a tenant the admin is not a member of',
    request: () => ({
      method: 'GET',
      url: '/webhooks/endpoints',
      headers: { ...world.asOwner, 'x-tenant-id': randomUUID() },
    }),
    status: 403,
    code: 'NOT_A_MEMBER',
  },
  {
    name: 'API key used with another tenant id',
    request: () => ({
      method: 'GET',
      url: '/webhooks/endpoints',
      headers: { ...world.asKey, 'x-tenant-id': randomUUID() },
    }),
    status: 403,
    code: 'TENANT_MISMATCH',
  },
  {
    name: 'no credentials',
    request: () => ({ method: 'GET', url: '/webhooks/endpoints' }),
    status: 401,
    code: 'UNAUTHORIZED',
  },
  {
    name: 'Authorization without Bearer',
    request: () => ({ method: 'GET', url: '/webhooks/endpoints', headers: { authorization: 'Basic dXNlcjpwYXNz' } }),
    status: 401,
    code: 'UNAUTHORIZED',
  },
  {
    name: 'a forged JWT',
    request: () => ({
      method: 'GET',
      url: '/auth/me',
      headers: { authorization: `Bearer ${world.owner.token.slice(0, -4)}AAAA` },
    }),
    status: 401,
    code: 'UNAUTHORIZED',
  },
  {
    name: 'a JWT with alg none',
    request: () => {
      const [, payload] = world.owner.token.split('.');
      const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
      return { method: 'GET', url: '/auth/me', headers: { authorization: `Bearer ${header}.${payload}.` } };
    },
    status: 401,
    code: 'UNAUTHORIZED',
  },
  {
    name: 'an unknown API key',
    request: () => ({
      method: 'GET',
      url: '/webhooks/endpoints',
      headers: { authorization: `Bearer ${world.key.key.slice(0, -6)}zzzzzz` },
    }),
    status: 401,
    code: 'UNAUTHORIZED',
  },
  {
    name: 'an API key on a session-only route',
    request: () => ({ method: 'GET', url: '/tenants', headers: world.asKey }),
    status: 403,
    code: 'SESSION_REQUIRED',
  },
  ...[
    [
      'contact attributes',
      () => ({
        method: 'PUT',
        url: '/contacts',
        headers: { ...world.asKey, ...json },
        payload: `{"email":"deep@example.test","attributes":${nested(5000)}}`,
      }),
      'attributes.a.a.a.a.a.a.a',
    ],
    [
      'send metadata',
      () => ({
        method: 'POST',
        url: '/emails/send',
        headers: { ...world.asKey, ...json },
        payload: `{"from":"a@acme.test","to":"b@example.test","subject":"s","textBody":"t","metadata":${nested(100000)}}`,
      }),
      'metadata.a.a.a.a.a.a.a',
    ],
    [
      'template data',
      () => ({
        method: 'POST',
        url: '/emails/send-template',
        headers: { ...world.asKey, ...json },
        payload: `{"slug":"x","from":"a@acme.test","to":"b@example.test","data":{"list":[${nested(40)}]}}`,
      }),
      'data.list[0].a.a.a.a.a.a',
    ],
  ].map(([where, request, field]): Case => ({
    name: `JSON nested thousands of levels deep in ${where as string}`,
    request: request as () => InjectOptions,
    status: 400,
    code: 'VALIDATION_FAILED',
    check: (body) => {
      assert.match(body.message, 'nests deeper than 32 levels');
      assert.is(body.details[0].field, field);
    },
  })),
  ...[
    [
      'U+0000 in a body',
      '/emails/send',
      '{"from":"a@acme.test","to":"b@example.test","subject":"s","textBody":"a\\u0000b"}',
      'textBody',
      /U\+0000/,
    ],
    [
      'an unpaired surrogate in a subject',
      '/emails/send',
      '{"from":"a@acme.test","to":"b@example.test","subject":"x\\ud800","textBody":"t"}',
      'subject',
      /unpaired UTF-16 surrogate/,
    ],
    [
      'U+0000 in a metadata key',
      '/emails/send',
      '{"from":"a@acme.test","to":"b@example.test","subject":"s","textBody":"t","metadata":{"k\\u0000":"v"}}',
      'metadata.k\u0000',
      /U\+0000/,
    ],
    [
      'a low surrogate alone in a batch’s HTML',
      '/emails/batch',
      '{"from":"a@acme.test","subject":"s","htmlBody":"<p>\\udc00</p>","recipients":[{"to":"ok@example.test"},{"to":"b@example.test"}]}',
      'htmlBody',
      /unpaired/,
    ],
  ].map(([what, url, payload, field, message]): Case => ({
    name: `${what as string}: text PostgreSQL cannot store`,
    request: () => ({
      method: 'POST',
      url: url as string,
      headers: { ...world.asKey, ...json },
      payload: payload as string,
    }),
    status: 400,
    code: 'VALIDATION_FAILED',
    check: (body) => {
      assert.match(body.message, message as RegExp);
      assert.is(body.details[0].field, field);
    },
  })),
  ...['/contacts', '/campaigns'].flatMap((path) =>
    ['1e308', '99999999999999999999', '1000001', '0'].map((page): Case => ({
      name: `GET ${path}?page=${page}`,
      request: () => ({ method: 'GET', url: `${path}?page=${page}`, headers: world.asKey }),
      status: 400,
      code: 'VALIDATION_FAILED',
      check: (body) =>
        assert.ok(
          body.details.some((detail: { field: string }) => /page/.test(detail.field)),
          JSON.stringify(body.details),
        ),
    })),
  ),
  ...[
    ['a local part over 64 octets', `${'l'.repeat(65)}@example.test`, /local part longer than 64 octets/],
    [
      'a domain over 255 octets',
      `a@${Array.from({ length: 5 }, () => 'd'.repeat(60)).join('.')}.test`,
      /domain longer than 255 octets|not a valid e-mail address/,
    ],
    [
      'a path over 256 octets',
      `${'l'.repeat(64)}@${Array.from({ length: 3 }, () => 'd'.repeat(62)).join('.')}.test`,
      /longer than the 256 octets of an SMTP path/,
    ],
  ].map(([what, address, message]): Case => ({
    name: `a recipient with ${what as string}`,
    request: () => ({
      method: 'POST',
      url: '/emails/send',
      headers: { ...world.asKey, ...json },
      payload: { from: 'a@acme.test', to: address, subject: 's', textBody: 't' },
    }),
    status: 400,
    code: 'VALIDATION_FAILED',
    check: (body) => {
      assert.is(body.details[0].field, 'to');
      assert.match(body.details[0].message, message as RegExp);
    },
  })),
  {
    name: 'a malformed URL',
    request: () => ({ method: 'GET', url: '/tenants/%E0%A4%A' }),
    status: 400,
    code: 'BAD_URL',
  },
];

for (const c of CASES) {
  test(`${c.name} → ${c.status} ${c.code}`, async () => {
    const res = await ctx.app.inject(c.request());
    const body = assertErrorBody(res, c.status, c.code);
    c.check?.(body as Record<string, any>);
  });
}

test('nothing in the table changed the database', async () => {
  const [rows] = await ctx.db.sequelize.query(
    `SELECT (SELECT count(*) FROM tenants)::int AS tenants, (SELECT count(*) FROM email_logs)::int AS logs,
            (SELECT count(*) FROM jobs WHERE queue = 'send')::int AS sends`,
  );
  // No send of the table was written, not even a batch's valid entries beside a refused one.
  assert.equal((rows as Array<Record<string, number>>)[0], { tenants: 1, logs: 0, sends: 0 });
});

test('the daemon still answers after the whole table', async () => {
  const res = await ctx.app.inject({ method: 'GET', url: '/health' });
  assert.is(res.statusCode, 200);
});

test.run();
