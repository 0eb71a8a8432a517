// Route schemas compile on first use (daemon/plugins/lazy-schemas.ts): every route's still compiles,
// a validator built late still reports why a request failed, and header names stay case-insensitive.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import Fastify from 'fastify';
import { Type } from '@sinclair/typebox';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createWorld } from './helpers/fixtures.ts';
import { assertErrorBody } from './helpers/error-body.ts';
import { compileRouteSchemas } from '../daemon/app.ts';
import { createLazySchemas } from '../daemon/plugins/lazy-schemas.ts';

let ctx: TestContext;
let world: Awaited<ReturnType<typeof createWorld>>;
test.before(async () => {
  ctx = await createTestContext();
  world = await createWorld(ctx.app);
});
test.after(async () => {
  await ctx?.close();
});

test('every route schema of the app compiles', async () => {
  await ctx.app.ready();
  compileRouteSchemas(ctx.app);
});

test('a validator compiled at its first request names the fields that failed', async () => {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: world.asKey,
    payload: { from: 'a@b.example', subject: 'no recipient', text: 'x' },
  });
  const body = assertErrorBody(res, 400, 'VALIDATION_FAILED');
  assert.ok(
    body.details?.some((detail) => detail.field === 'to' && detail.message === 'is required'),
    res.body,
  );
});

test('header schemas with capitals match the lowercased headers Node hands over', async () => {
  const schemas = createLazySchemas();
  const app = Fastify({ schemaController: { compilersFactory: schemas.compilersFactory } });
  app.get(
    '/probe',
    {
      schema: {
        headers: Type.Object({ 'X-Probe': Type.String({ minLength: 3 }) }),
        response: { 200: Type.Object({ ok: Type.Boolean() }) },
      },
    },
    async () => ({ ok: true, extra: 'dropped by the serializer' }),
  );
  try {
    const good = await app.inject({ method: 'GET', url: '/probe', headers: { 'x-probe': 'abcd' } });
    assert.is(good.statusCode, 200, good.body);
    assert.equal(good.json(), { ok: true });
    const bad = await app.inject({ method: 'GET', url: '/probe', headers: { 'X-Probe': 'a' } });
    assert.is(bad.statusCode, 400, bad.body);
    assert.match(bad.body, /x-probe/);
    const missing = await app.inject({ method: 'GET', url: '/probe' });
    assert.is(missing.statusCode, 400, missing.body);
    schemas.compileAll();
  } finally {
    await app.close();
  }
});

test.run();
