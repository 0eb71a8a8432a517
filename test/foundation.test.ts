import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';

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

test.run();
