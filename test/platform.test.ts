// Platform settings: platform admins only, validated, stored as key/value rows, read by others.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createAdmin, createWorld, type AdminFixture } from './helpers/fixtures.ts';
import { PlatformSetting } from '../daemon/modules/platform/model.ts';
import { getPlatformSettings } from '../daemon/db/platform-settings.ts';
import { AuditEvent } from '../daemon/modules/audit/model.ts';

let ctx: TestContext;
let root: AdminFixture;
let plain: AdminFixture;
const as = (admin: AdminFixture) => ({ authorization: `Bearer ${admin.token}` });

test.before(async () => {
  ctx = await createTestContext();
  root = await createAdmin(ctx.app, { platformAdmin: true });
  plain = await createAdmin(ctx.app);
});
test.after(async () => {
  await ctx?.close();
});

test('GET gives the defaults to platform admins', async () => {
  const res = await ctx.app.inject({ method: 'GET', url: '/platform/settings', headers: as(root) });
  assert.is(res.statusCode, 200);
  const { feedbackLoopDomains, ...rest } = res.json();
  for (const operator of ['yahoo.com', 'aol.com', 'hotmail.com', 'outlook.com', 'comcast.net', 'mail.ru'])
    assert.ok(feedbackLoopDomains.includes(operator), operator);
  assert.equal(rest, {
    registrationOpen: true,
    defaultFromAddress: null,
    trackOpensByDefault: false,
    trackClicksByDefault: false,
    spfInclude: null,
    returnPathDomain: null,
    tlsReportOrganization: null,
    tlsReportContact: null,
    logRetentionDays: 60,
    bodyRetentionDays: 30,
    rawMessageRetentionDays: 30,
    eventRetentionDays: 60,
    webhookDeliveryRetentionDays: 30,
    complaintRateWarn: 0.001,
    complaintRatePause: 0.003,
    hardBounceRateWarn: 0.05,
    hardBounceRatePause: 0.1,
    riskMinSends: 1000,
    riskMinComplaints: 3,
    riskMinHardBounces: 10,
    invitationsPerTenantPerDay: 50,
    invitationsPerPlatformPerDay: 1000,
  });
});

test('other admins and API keys get 403; no token 401', async () => {
  const res = await ctx.app.inject({ method: 'GET', url: '/platform/settings', headers: as(plain) });
  assert.is(res.statusCode, 403);
  assert.is(res.json().code, 'PLATFORM_ADMIN_REQUIRED');
  const patch = await ctx.app.inject({
    method: 'PATCH',
    url: '/platform/settings',
    headers: as(plain),
    payload: { registrationOpen: false },
  });
  assert.is(patch.statusCode, 403);
  const { asKey } = await createWorld(ctx.app);
  assert.is((await ctx.app.inject({ method: 'GET', url: '/platform/settings', headers: asKey })).statusCode, 403);
  assert.is((await ctx.app.inject({ method: 'GET', url: '/platform/settings' })).statusCode, 401);
  assert.is(await PlatformSetting.count(), 0);
});

test('PATCH stores each setting as a row and answers the whole set; getPlatformSettings reads it', async () => {
  const res = await ctx.app.inject({
    method: 'PATCH',
    url: '/platform/settings',
    headers: as(root),
    payload: {
      registrationOpen: false,
      defaultFromAddress: 'hello@mail.example.test',
      trackOpensByDefault: true,
      spfInclude: 'spf.mail.example.test',
    },
  });
  assert.is(res.statusCode, 200);
  assert.is(res.json().registrationOpen, false);
  assert.is(res.json().trackClicksByDefault, false);
  assert.is((await PlatformSetting.findByPk('defaultFromAddress'))!.value, 'hello@mail.example.test');
  const settings = await getPlatformSettings(ctx.db.sequelize);
  assert.is(settings.trackOpensByDefault, true);
  assert.is(settings.spfInclude, 'spf.mail.example.test');
  const status = await ctx.app.inject({ method: 'GET', url: '/auth/registration-status' });
  assert.equal(status.json(), { open: false, hasAdmins: true });
  const clear = await ctx.app.inject({
    method: 'PATCH',
    url: '/platform/settings',
    headers: as(root),
    payload: { defaultFromAddress: null },
  });
  assert.is(clear.json().defaultFromAddress, null);
  assert.is(await AuditEvent.count({ where: { action: 'platform.settings_updated' } }), 2);
});

test('PATCH refuses unknown keys, wrong types, bad addresses and empty bodies', async () => {
  for (const payload of [
    { unknownSetting: true },
    { registrationOpen: 'nope' },
    { defaultFromAddress: 'not an address' },
    { spfInclude: 'bad host!' },
    {},
  ]) {
    const res = await ctx.app.inject({ method: 'PATCH', url: '/platform/settings', headers: as(root), payload });
    assert.is(res.statusCode, 400, JSON.stringify(payload));
    assert.is(res.json().code, 'VALIDATION_FAILED');
  }
});

test('the sending-risk levels and feedback-loop operators are settings: changed, validated', async () => {
  const res = await ctx.app.inject({
    method: 'PATCH',
    url: '/platform/settings',
    headers: as(root),
    payload: { complaintRatePause: 0.005, feedbackLoopDomains: ['fbl.example.net'] },
  });
  assert.is(res.statusCode, 200, res.body);
  assert.equal([res.json().complaintRatePause, res.json().feedbackLoopDomains], [0.005, ['fbl.example.net']]);
  const bad = await ctx.app.inject({
    method: 'PATCH',
    url: '/platform/settings',
    headers: as(root),
    payload: { hardBounceRatePause: 5 },
  });
  assert.is(bad.statusCode, 400, bad.body);
});

test.run();
