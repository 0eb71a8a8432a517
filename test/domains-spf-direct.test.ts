// The SPF record `domains add` proposes under DELIVERY=direct (issue 49 §2): it proposed
// `v=spf1 ip4:127.0.0.1 ~all` (PUBLIC_URL's address) whatever the node leaves from. Now it names the
// outbound addresses (OUTBOUND_ADDRESS and every IP pool address), and says when they are private.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createAdmin, createWorld } from './helpers/fixtures.ts';
import { listen } from './helpers/svc-cli.ts';
import { InProcessCli, operationMatchers } from './helpers/svc-inprocess.ts';
import { evaluateSpf, mergeSpf } from '../daemon/modules/domains/spf.ts';
import type { DnsLookup } from '../daemon/modules/domains/dns-lookup.ts';

type Records = { record: string; value: string; note?: string }[];
const spfOf = (body: { records: Records }) => body.records.find((record) => record.record === 'spf')!;

async function addDomain(ctx: TestContext, headers: Record<string, string>, name: string) {
  const res = await ctx.app.inject({ method: 'POST', url: '/domains', headers, payload: { name } });
  assert.is(res.statusCode, 201, res.body);
  return res.json();
}

test('several mechanisms: each must be authorised, and the merge adds the missing ones', async () => {
  const lookup: DnsLookup = {
    txt: async () => ({ kind: 'nxdomain' }),
    cname: async () => ({ kind: 'nxdomain' }),
    mx: async () => ({ kind: 'nxdomain' }),
  };
  const ours = 'ip4:203.0.113.7 ip4:198.51.100.9';
  assert.is((await evaluateSpf(lookup, 'v=spf1 ip4:203.0.113.0/24 -all', ours)).authorisesUs, false);
  assert.is((await evaluateSpf(lookup, 'v=spf1 ip4:203.0.113.0/24 ip4:198.51.100.9 -all', ours)).authorisesUs, true);
  assert.is(mergeSpf(['v=spf1 ip4:203.0.113.0/24 -all'], ours), 'v=spf1 ip4:203.0.113.0/24 ip4:198.51.100.9 -all');
});

test("direct delivery: the proposed SPF names OUTBOUND_ADDRESS and the pool addresses, with a note for a private one (the pool's loopback address here)", async () => {
  const ctx = await createTestContext({
    env: { DELIVERY: 'direct', OUTBOUND_ADDRESS: '185.199.108.7', PUBLIC_URL: 'http://127.0.0.1:3000' },
  });
  try {
    const platformAdmin = await createAdmin(ctx.app, { platformAdmin: true });
    const pool = await ctx.app.inject({
      method: 'POST',
      url: '/platform/ip-pools',
      headers: { authorization: `Bearer ${platformAdmin.token}` },
      payload: { name: 'outbound', addresses: [{ ip: '127.0.0.77', ehloName: 'out1.example.test' }] },
    });
    assert.is(pool.statusCode, 201, pool.body);
    const world = await createWorld(ctx.app);
    const spf = spfOf(await addDomain(ctx, world.asOwner, 'acme.test'));
    assert.is(spf.value, 'v=spf1 ip4:185.199.108.7 ip4:127.0.0.77 ~all');
    assert.match(spf.note!, /^127\.0\.0\.77 is loopback: receivers see the public address a NAT gives it/);
    assert.not.match(spf.note!, /185\.199\.108\.7/);

    // The CLI prints the note under the record.
    const document = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const cli = new InProcessCli(await listen(ctx), operationMatchers(document));
    cli.writeProfile({ accessToken: world.owner.token, refreshToken: 'unused', tenantId: world.tenantId });
    const out = await cli.run(['domains', 'add', 'other.test'], { env: { SVC_TENANT_ID: world.tenantId } });
    cli.cleanup();
    assert.is(out.code, 0, out.stdout + out.stderr);
    assert.match(out.stdout, /v=spf1 ip4:185\.199\.108\.7 ip4:127\.0\.0\.77 ~all/);
    assert.match(out.stdout, /note: 127\.0\.0\.77 is loopback/);
  } finally {
    await ctx.close();
  }
});

test('direct delivery with no outbound address: PUBLIC_URL’s address, and loopback is called what it is', async () => {
  const ctx = await createTestContext({ env: { DELIVERY: 'direct', PUBLIC_URL: 'http://127.0.0.1:3000' } });
  try {
    const world = await createWorld(ctx.app);
    const spf = spfOf(await addDomain(ctx, world.asOwner, 'acme.test'));
    assert.is(spf.value, 'v=spf1 ip4:127.0.0.1 ~all');
    assert.match(spf.note!, /127\.0\.0\.1 is loopback/);
  } finally {
    await ctx.close();
  }
});

test('relay delivery: the proposal is unchanged and carries no note', async () => {
  const ctx = await createTestContext({ env: { OUTBOUND_ADDRESS: '10.0.0.5', PUBLIC_URL: 'https://mail.svc.test' } });
  try {
    const world = await createWorld(ctx.app);
    const spf = spfOf(await addDomain(ctx, world.asOwner, 'acme.test'));
    assert.is(spf.value, 'v=spf1 include:_spf.mail.svc.test ~all');
    assert.is(spf.note, undefined);
  } finally {
    await ctx.close();
  }
});

test.run();
