// Per-destination deliverability end to end (issue 29): a daemon with DELIVERY=direct delivers through
// the MTA loop to two loopback MX hosts, one whose MX name matches Google's patterns (127.0.0.160,
// alt1.gmail-smtp-in.l.google.com) and one that matches nobody (127.0.0.161 → default); the batch
// commits count each outcome per provider per UTC day (deliverability_daily). A complaint arrives later
// through the provider-report path (applyProviderReport, which the ARF and webhook receivers call)
// without MX hosts, and counts under the provider the MTA saw for the recipient's domain.
// GET /stats/deliverability answers the counts per provider and day, the totals and the rates.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { MxHost } from './helpers/mx-host.ts';
import { MtaFixture } from './helpers/mta-fixture.ts';
import { api, openWorldDatabase, type SendWorld } from './helpers/send-daemon.ts';
import { waitFor } from './helpers/wait.ts';
import { loadConfig } from '../daemon/config.ts';
import { loadSecrets } from '../daemon/secrets.ts';
import { applyProviderReport } from '../daemon/modules/inbound/service.ts';
import type { DeliverabilityBody } from '../shared/schemas/deliverability.ts';

const GOOGLE_MX_ADDRESS = '127.0.0.160';
const OTHER_MX_ADDRESS = '127.0.0.161';

let mta: MtaFixture;
let googleMx: MxHost;
let world: SendWorld;
let lateTries = 0;
const today = new Date().toISOString().slice(0, 10);

test.before(async () => {
  mta = await MtaFixture.start();
  googleMx = await mta.mxHost(
    {
      rcpt: (address) =>
        address === 'ghost@workspace.test'
          ? '550 5.1.1 <ghost@workspace.test>: no such user'
          : address === 'late@workspace.test' && lateTries++ === 0
            ? // Not Gmail's 4.7.28: that one suspends Google for 15 minutes (mta/reactions.ts).
              '451 4.2.0 mailbox busy'
            : null,
    },
    GOOGLE_MX_ADDRESS,
  );
  await mta.mxHost({}, OTHER_MX_ADDRESS, ['other.test']);
  // A Workspace-like domain: its own name, Google's MX hosts.
  mta.route('workspace.test', 'alt1.gmail-smtp-in.l.google.com', GOOGLE_MX_ADDRESS);
  world = await mta.seed({ SEND_RETRY_BASE_MS: '300' });
  await mta.startDaemon();
});

test.after(async () => {
  await mta?.close();
});

async function send(to: string[]): Promise<{ id: string; messageId: string }> {
  const res = await api(world, 'POST', '/emails/send', {
    from: 'Acme <app@acme.test>',
    to,
    subject: `to ${to.join(', ')}`,
    textBody: 'Hello',
  });
  assert.is(res.status, 202, JSON.stringify(res.body));
  return { id: res.body.id as string, messageId: res.body.messageId as string };
}

async function statusOf(id: string): Promise<string> {
  return (await api(world, 'GET', `/emails/logs/${id}`)).body.status as string;
}

async function stats(query = ''): Promise<DeliverabilityBody> {
  const res = await api(world, 'GET', `/stats/deliverability${query}`);
  assert.is(res.status, 200, JSON.stringify(res.body));
  return res.body as DeliverabilityBody;
}

test('direct deliveries count per provider and day: delivered, deferred, bounced; the period has totals and rates', async () => {
  const first = await send(['a@workspace.test', 'b@workspace.test', 'c@other.test']);
  const late = await send(['late@workspace.test']);
  const ghost = await send(['ghost@workspace.test']);
  await waitFor(
    'the three sends to finish',
    async () =>
      (await statusOf(first.id)) === 'DELIVERED' &&
      (await statusOf(late.id)) === 'DELIVERED' &&
      (await statusOf(ghost.id)) === 'BOUNCED',
    { timeoutMs: 60_000 },
  );
  assert.is(lateTries, 2, 'late@ was deferred once, then taken');
  const body = await stats();
  assert.is(body.to, today);
  assert.is(body.provider, null);
  assert.equal(body.days, [
    { day: today, provider: 'default', delivered: 1, deferred: 0, bounced: 0, complained: 0 },
    { day: today, provider: 'google', delivered: 3, deferred: 1, bounced: 1, complained: 0 },
  ]);
  assert.equal(body.totals, [
    {
      provider: 'default',
      delivered: 1,
      deferred: 0,
      bounced: 0,
      complained: 0,
      complaintRate: 0,
      bounceRate: 0,
    },
    {
      provider: 'google',
      delivered: 3,
      deferred: 1,
      bounced: 1,
      complained: 0,
      complaintRate: 0,
      bounceRate: 0.25,
    },
  ]);
  const db = await openWorldDatabase(world);
  try {
    const [seen] = await db.sequelize.query(`SELECT domain, provider FROM destination_providers ORDER BY domain`);
    assert.equal(seen, [
      { domain: 'other.test', provider: 'default' },
      { domain: 'workspace.test', provider: 'google' },
    ]);
  } finally {
    await db.close();
  }
});

test('a complaint reported later (no MX hosts known) counts under the provider the MTA saw for the domain', async () => {
  const { messageId } = await send(['fan@workspace.test']);
  await waitFor(
    'the send to be delivered',
    async () => googleMx.messages.some((m) => m.to.includes('fan@workspace.test')),
    {
      timeoutMs: 30_000,
    },
  );
  const config = loadConfig(world.env);
  const secrets = loadSecrets(config.dataDir, config.jwtSecret);
  const db = await openWorldDatabase(world);
  try {
    await waitFor(
      'the delivery to be counted',
      async () => (await stats('?provider=google')).totals[0]?.delivered === 4,
      {
        timeoutMs: 15_000,
      },
    );
    const applied = await applyProviderReport(
      { db, config, secrets },
      { type: 'complained', messageIds: [messageId], recipients: ['fan@workspace.test'] },
      { source: 'smtp', reporter: 'fbl@mail.example.test' },
    );
    assert.is(applied, 1);
    // Replayed: counted once.
    await applyProviderReport(
      { db, config, secrets },
      { type: 'complained', messageIds: [messageId], recipients: ['fan@workspace.test'] },
      { source: 'smtp', reporter: 'fbl@mail.example.test' },
    );
  } finally {
    await db.close();
  }
  const body = await stats('?provider=google');
  assert.is(body.provider, 'google');
  assert.equal(body.days, [{ day: today, provider: 'google', delivered: 4, deferred: 1, bounced: 1, complained: 1 }]);
  assert.is(body.totals[0].complaintRate, 0.25);
});

test('the period is checked: from after to, or more than 366 days → 400 with the field', async () => {
  const after = await api(world, 'GET', '/stats/deliverability?from=2026-05-02&to=2026-05-01');
  assert.is(after.status, 400);
  assert.is(after.body.code, 'VALIDATION_FAILED');
  assert.equal(after.body.details, [{ field: 'from', message: 'must be on or before 2026-05-01' }]);
  const long = await api(world, 'GET', '/stats/deliverability?from=2024-01-01&to=2026-05-01');
  assert.is(long.status, 400);
  assert.match(long.body.message, /at most 366 can be asked at once/);
  const bad = await api(world, 'GET', '/stats/deliverability?provider=Not%20A%20Key');
  assert.is(bad.status, 400);
  const empty = await stats('?from=2026-01-01&to=2026-01-31');
  assert.equal([empty.from, empty.to, empty.days, empty.totals], ['2026-01-01', '2026-01-31', [], []]);
});

test.run();
