// Schema-driven fuzzing over every route in the OpenAPI document (so it grows with every endpoint):
// params, queries and bodies generated from each operation's schemas, valid and broken, sent with
// every kind of credential. No answer may be a 500 (or any 5xx but 501/503), and every error answer
// must be CONTRACT.md's body.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createAdmin, createWorld } from './helpers/fixtures.ts';
import { errorBodyProblem } from './helpers/error-body.ts';
import {
  bodyArbitrary,
  queryArbitrary,
  pathArbitrary,
  type OpenApiDocument,
  type Operation,
  type Schema,
} from './helpers/openapi-arbitraries.ts';

const RUNS_PER_ROUTE = Number(process.env.FUZZ_RUNS ?? 12);
/** Routes that answer with a stream that never ends; a request to them would hang the run. */
const STREAMING = (operation: Operation) => JSON.stringify(operation.responses ?? {}).includes('text/event-stream');

const ctx: TestContext = await createTestContext({
  env: { RATE_LIMIT_MAX: '10000000', AUTH_RATE_LIMIT_MAX: '10000000' },
});
const world = await createWorld(ctx.app);
const platform = await createAdmin(ctx.app, { platformAdmin: true });
const doc = ctx.app.swagger() as unknown as OpenApiDocument;

const CREDENTIALS: Array<Record<string, string>> = [
  {},
  world.asOwner,
  world.asKey,
  { authorization: `Bearer ${platform.token}`, 'x-tenant-id': world.tenantId },
  { authorization: world.asOwner.authorization, 'x-tenant-id': randomUUID() },
  { authorization: 'Bearer svc_live_not-a-real-key-at-all' },
  { authorization: `Bearer ${world.owner.token}x` },
];
/** Real ids first (so routes get past their 404s), then strangers and junk. */
const KNOWN_IDS = [world.tenantId, world.key.id, world.owner.id, platform.id];

interface Sample {
  path: string;
  query: string;
  body: { present: boolean; value: unknown; raw: boolean };
  headers: Record<string, string>;
}

/** A route may declare a page for browsers (text/html, a string schema) instead of the envelope. */
function declaresPage(operation: Operation, status: number): boolean {
  const response = operation.responses?.[String(status)] ?? operation.responses?.[`${String(status)[0]}XX`];
  const content = Object.entries(response?.content ?? {});
  if (content.length === 0) return false;
  return content.every(
    ([type, media]) => !type.includes('json') || (media as { schema?: Schema }).schema?.type === 'string',
  );
}

const operations = Object.entries(doc.paths)
  .flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
  )
  .filter(({ method }) => ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(method))
  // Deletions last, so that they do not take away the tenant the other routes work in.
  .sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));

test('the OpenAPI document lists the routes', () => {
  assert.ok(operations.length >= 5, `only ${operations.length} operations`);
  assert.ok(operations.some((op) => op.path === '/health/queues'));
});

for (const { path, method, operation } of operations) {
  if (STREAMING(operation)) {
    test(`${method} ${path} (a stream: only checked without credentials)`, async () => {
      const res = await ctx.app.inject({ method: method as 'GET', url: path.replace(/\{[^}]+\}/g, randomUUID()) });
      assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${res.statusCode} ${res.body}`);
      assert.is(errorBodyProblem(res), null);
    });
    continue;
  }
  test(`${method} ${path}: no 5xx, errors in the envelope`, async () => {
    const parameters = operation.parameters ?? [];
    const bodySchema: Schema | undefined = operation.requestBody?.content?.['application/json']?.schema;
    const sample: fc.Arbitrary<Sample> = fc.record({
      path: pathArbitrary(path, parameters, KNOWN_IDS, doc),
      query: queryArbitrary(parameters, doc),
      body: bodyArbitrary(bodySchema, doc, method),
      headers: fc.constantFrom(...CREDENTIALS),
    });
    await fc.assert(
      fc.asyncProperty(sample, async (s) => {
        const url = s.query ? `${s.path}?${s.query}` : s.path;
        const headers: Record<string, string> = { ...s.headers };
        let payload: string | undefined;
        if (s.body.present) {
          headers['content-type'] = 'application/json';
          payload = s.body.raw ? String(s.body.value) : JSON.stringify(s.body.value ?? null);
        }
        const res = await ctx.app.inject({ method: method as 'GET', url, headers, payload });
        const status = res.statusCode;
        const where = `${method} ${url} [${Object.keys(s.headers).join(',') || 'anonymous'}] body=${(payload ?? '').slice(0, 300)} → ${status} ${res.body.slice(0, 300)}`;
        if (status >= 500 && status !== 501 && status !== 503) throw new Error(`server error: ${where}`);
        if (status >= 400) {
          if (declaresPage(operation, status) && String(res.headers['content-type']).startsWith('text/html')) return;
          const problem = errorBodyProblem(res);
          if (problem) throw new Error(`${problem}: ${where}`);
        }
      }),
      {
        numRuns: RUNS_PER_ROUTE,
        endOnFailure: true,
        includeErrorInReport: true,
        ...(process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED) } : {}),
      },
    );
  });
}

test('after the fuzzing the daemon is healthy', async () => {
  const res = await ctx.app.inject({ method: 'GET', url: '/health/ready' });
  assert.is(res.statusCode, 200, res.body);
});

test.after(async () => {
  await ctx.close();
});

test.run();
