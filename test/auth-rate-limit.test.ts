// The auth rate limit on the sign-in family: login, register, forgot/reset password and the 2FA
// steps, where every wrong code counts. A small limit keeps the test short.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createAdmin } from './helpers/fixtures.ts';

let ctx: TestContext;
test.before(async () => {
  ctx = await createTestContext({ env: { AUTH_RATE_LIMIT_MAX: '3', AUTH_RATE_LIMIT_WINDOW_MS: '60000' } });
});
test.after(async () => {
  await ctx?.close();
});

test('login: the 4th attempt in the window is 429 with Retry-After, in the error body', async () => {
  const statuses: number[] = [];
  let last;
  for (let i = 0; i < 4; i++) {
    last = await ctx.app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { email: 'nobody@example.test', password: 'wrong password' },
    });
    statuses.push(last.statusCode);
  }
  assert.equal(statuses, [401, 401, 401, 429]);
  assert.ok(Number(last!.headers['retry-after']) >= 1);
  assert.is(last!.json().code, 'RATE_LIMITED');
  assert.is(last!.headers['x-ratelimit-limit'], '3');
});

test('wrong 2FA codes count against the limit: the 4th verify-2fa is 429', async () => {
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/auth/login/verify-2fa',
      payload: { challengeToken: 'z'.repeat(43), code: '123456' },
    });
    statuses.push(res.statusCode);
  }
  assert.equal(statuses, [401, 401, 401, 429]);
});

test('wrong codes on /auth/2fa/verify (signed in) count too', async () => {
  const admin = await createAdmin(ctx.app);
  const headers = { authorization: `Bearer ${admin.token}` };
  await ctx.app.inject({ method: 'POST', url: '/auth/2fa/enable', headers });
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) {
    const res = await ctx.app.inject({ method: 'POST', url: '/auth/2fa/verify', headers, payload: { code: '000000' } });
    statuses.push(res.statusCode);
  }
  assert.is(statuses[3], 429);
  assert.ok(statuses.slice(0, 3).every((s) => s === 400));
});

test('forgot-password and register are limited as well; other routes are not', async () => {
  const forgot: number[] = [];
  for (let i = 0; i < 4; i++) {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/auth/forgot-password',
      headers: { 'accept-language': 'en' },
      payload: { email: 'x@example.test' },
    });
    forgot.push(res.statusCode);
  }
  assert.equal(forgot, [200, 200, 200, 429]);
  const status: number[] = [];
  for (let i = 0; i < 5; i++)
    status.push((await ctx.app.inject({ method: 'GET', url: '/auth/registration-status' })).statusCode);
  assert.ok(status.every((s) => s === 200));
});

test.run();
