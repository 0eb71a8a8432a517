import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import Fastify from 'fastify';
import errorsPlugin from '../daemon/plugins/errors.ts';
import { registerPendingRoutes } from '../daemon/modules/pending-routes.ts';
import { access } from '../daemon/plugins/access.ts';
import type { App } from '../daemon/app-types.ts';

let ctx: TestContext;
test.before(async () => {
  ctx = await createTestContext();
});
test.after(async () => {
  await ctx?.close();
});

test('GET /health answers ok', async () => {
  const res = await ctx.app.inject({ method: 'GET', url: '/health' });
  assert.is(res.statusCode, 200);
  assert.is(res.json().status, 'ok');
});

test('unknown route is a JSON 404 in the error envelope', async () => {
  const res = await ctx.app.inject({ method: 'GET', url: '/nope' });
  assert.is(res.statusCode, 404);
  const body = res.json();
  assert.is(body.code, 'ROUTE_NOT_FOUND');
  assert.is(body.error, 'Not Found');
  assert.type(body.message, 'string');
});

// Every spec area is built now, so the 501 table is exercised with a stand-in area on a bare app.
test('pending endpoint answers 501 with a sentence', async () => {
  const app = Fastify();
  await app.register(errorsPlugin);
  registerPendingRoutes(app as unknown as App, [
    { tag: 'demo', reason: 'Demo is not built yet.', routes: [{ method: 'GET', url: '/demo', access: access.public() }] },
  ]);
  const res = await app.inject({ method: 'GET', url: '/demo' });
  await app.close();
  assert.is(res.statusCode, 501);
  assert.is(res.json().code, 'NOT_IMPLEMENTED');
  assert.match(res.json().message, /not implemented yet/);
});

test.run();
