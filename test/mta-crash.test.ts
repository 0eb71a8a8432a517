// Direct delivery under kill -9 (issue 28): a message whose DATA the MX host answered 2xx is never
// sent again, a message whose reply never came is sent again (a duplicate at most of what was in
// flight), and every accepted message ends DELIVERED. The daemon's batch commit is held back by a
// row lock this file takes on the email logs, so the kill lands after the 2xx replies and their
// marks but before the outcomes commit: the window the mark exists for. Slow messages are still
// waiting for their reply to DATA when the kill comes.
//
// The killed daemon's leases (60 s, the production default) must run out before the restarted one
// reclaims its rows, so this file takes about 75 s.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Transaction } from 'sequelize';
import type { MxHost } from './helpers/mx-host.ts';
import { MtaFixture } from './helpers/mta-fixture.ts';
import { api, countRows, openWorldDatabase, type SendWorld } from './helpers/send-daemon.ts';
import { waitFor } from './helpers/wait.ts';

const FAST = 6;
const SLOW = 4;
/** How long the MX host takes to answer DATA for slow@ recipients: the kill comes within it. */
const SLOW_REPLY_MS = 5_000;

let mta: MtaFixture;
let mx: MxHost;
let world: SendWorld;
/** Recipients whose message reached DATA's end at the MX host (before any reply). */
const seen = new Set<string>();
/** Opened once the test holds its lock: no reply to DATA before that. */
let openGate: () => void = () => {};
const gate = new Promise<void>((resolve) => (openGate = resolve));

test.before(async () => {
  mta = await MtaFixture.start();
  mx = await mta.mxHost(
    {
      data: async (message) => {
        for (const address of message.to) seen.add(address);
        await gate;
        if (message.to.some((address) => address.startsWith('slow')))
          await new Promise((resolve) => setTimeout(resolve, SLOW_REPLY_MS));
        return null;
      },
    },
    undefined,
    ['x.test'],
  );
  world = await mta.seed();
  await mta.startDaemon();
});

test.after(async () => {
  await mta?.close();
});

const send = (to: string) => mta.send([to], { subject: `crash test to ${to}` });

const received = (address: string) => mx.messages.filter((m) => m.to.includes(address)).length;

test('kill -9 after DATA replies: answered messages never resent, in-flight ones resent, all DELIVERED', async () => {
  const fast = Array.from({ length: FAST }, (_, i) => `fast${i}@x.test`);
  const slow = Array.from({ length: SLOW }, (_, i) => `slow${i}@x.test`);
  const ids = new Map<string, string>();
  for (const address of [...fast, ...slow]) ids.set(address, await send(address));
  await waitFor('every message to reach the end of DATA at the MX host', () => seen.size === FAST + SLOW, {
    timeoutMs: 60_000,
  });

  const db = await openWorldDatabase(world);
  let lock: Transaction | null = null;
  try {
    // The outcome commit locks each email log: holding them keeps the batch from committing.
    lock = await db.sequelize.transaction();
    await db.sequelize.query(`SELECT id FROM email_logs WHERE id IN (:ids) FOR UPDATE`, {
      replacements: { ids: [...ids.values()] },
      transaction: lock,
    });
    openGate();
    await waitFor(
      'the fast messages answered 2xx and marked in the spool',
      async () =>
        (await countRows(
          db,
          `SELECT count(*) FROM mta_spool WHERE data_sent_at IS NOT NULL AND recipients->0->>'state' = 'answered'
             AND recipients->0->>'address' LIKE 'fast%'`,
        )) === FAST,
      { timeoutMs: 20_000 },
    );
    assert.ok(
      slow.every((address) => received(address) === 0),
      'the slow messages are still waiting for their reply',
    );
    mta.daemon!.child.kill('SIGKILL');
    await mta.daemon!.exit;
    mta.daemon = null;
    await lock.rollback();
    lock = null;

    // The commit died with the process: every row is still in the spool, none recorded.
    assert.is(await countRows(db, 'SELECT count(*) FROM mta_spool'), FAST + SLOW);
    assert.is(
      await countRows(db, `SELECT count(*) FROM email_logs WHERE id IN (:ids) AND status = 'DELIVERED'`, {
        ids: [...ids.values()],
      }),
      0,
    );
    const answeredAtKill = fast.filter((address) => received(address) === 1);
    assert.is(answeredAtKill.length, FAST, 'every fast message was answered before the kill');

    await mta.startDaemon();
    await waitFor(
      'every log to say DELIVERED after the restart',
      async () =>
        (await countRows(db, `SELECT count(*) FROM email_logs WHERE id IN (:ids) AND status = 'DELIVERED'`, {
          ids: [...ids.values()],
        })) ===
        FAST + SLOW,
      { timeoutMs: 150_000, intervalMs: 250 },
    );
    assert.is(await countRows(db, 'SELECT count(*) FROM mta_spool'), 0, 'finished rows leave the spool');
    for (const address of fast) assert.is(received(address), 1, `${address} answered before the kill, sent once`);
    for (const address of slow) assert.ok(received(address) >= 1, `${address} reached the MX host`);
    // Each recipient's delivery is an event once, whether settled from the mark or from a new reply.
    for (const [address, id] of ids) {
      const log = await api(world, 'GET', `/emails/logs/${id}`);
      assert.is(log.body.status, 'DELIVERED', address);
      const delivered = (log.body.events as { type: string; data: { recipients: string[] } }[]).filter(
        (e) => e.type === 'delivered',
      );
      assert.equal(
        delivered.map((e) => e.data.recipients),
        [[address]],
        address,
      );
    }
  } finally {
    await lock?.rollback();
    await db.close();
  }
});

test.run();
