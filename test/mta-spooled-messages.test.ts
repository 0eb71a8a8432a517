// The spooled message handed to the MTA thread in memory (mta/spooled-messages.ts): the claim takes it
// from there when this process spooled it, and reads it from the spool row (as base64) otherwise, byte
// for byte, every byte value included, a large message read in pieces; the hand-over is bounded and each message is handed over once.
// Delivery through a daemon with it is test/mta-direct.test.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes, randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { claimSpool, type SpoolClaimRooms, SpoolAnsweredMarks, type SpoolRecipient } from '../daemon/mta/sql/spool.ts';
import { spoolMessage } from '../daemon/mta/sql/spool-insert.ts';
import { SpooledMessageAnnouncer, SpooledMessages } from '../daemon/mta/spooled-messages.ts';

let ctx: TestContext;
/** A claim as a worker with no lanes yet makes it: any destination up to 100 rows. */
const NO_LANES: SpoolClaimRooms = { full: [], rooms: [], otherRoom: 100 };

test.before(async () => {
  ctx = await createTestContext({ env: { DELIVERY: 'direct' } });
});
test.after(async () => {
  await ctx?.close();
});

/** Every byte value, a CRLF line and a lone dot: what a message may hold that text would not keep. */
const BINARY = Buffer.concat([
  Buffer.from(Array.from({ length: 256 }, (_, byte) => byte)),
  Buffer.from('\r\n.\r\nSubject: é\r\n', 'utf8'),
]);

const handedOver = (announcer: SpooledMessageAnnouncer, ids: string[], message: Buffer) => {
  announcer.announce(ids, message);
  // The channel delivers on a later turn of the event loop.
  return new Promise((resolve) => setTimeout(resolve, 20));
};

async function spool(message: Buffer, domains: string[]): Promise<string[]> {
  const ids = domains.map(() => randomUUID());
  const byDomain = new Map(domains.map((domain) => [domain, [`someone@${domain}`]]));
  const added = await spoolMessage(ctx.db.sql, {
    ids,
    tenantId: null,
    emailId: null,
    envelopeFrom: 'bounces@acme.test',
    message,
    expiryHours: 1,
    byDomain,
  });
  assert.is(added, domains.length);
  return ids;
}

test('a claimed row carries its message from memory when handed over, else from the spool, byte for byte', async () => {
  const announcer = new SpooledMessageAnnouncer();
  const messages = new SpooledMessages();
  try {
    const [fromSpool] = await spool(BINARY, ['read.test']);
    const [inMemory, sameMessage] = await spool(BINARY, ['kept.test', 'kept2.test']);
    // A different buffer under the spooled ids: the claim can only return it from the hand-over.
    const marker = Buffer.concat([BINARY, Buffer.from('handed over')]);
    await handedOver(announcer, [inMemory, sameMessage], marker);
    assert.equal(messages.size, { messages: 2, bytes: 2 * marker.length });
    const claimed = await claimSpool(ctx.db.sql, 'test-worker', 60_000, NO_LANES, 10, messages);
    const byId = new Map(claimed.map((row) => [row.id, row]));
    assert.is(claimed.length, 3);
    assert.ok(byId.get(fromSpool)!.message.equals(BINARY), 'read from the spool row exactly');
    assert.ok(byId.get(inMemory)!.message.equals(marker), 'taken from memory');
    assert.ok(byId.get(sameMessage)!.message.equals(marker));
    assert.equal(messages.size, { messages: 0, bytes: 0 }, 'handed over once');
    // The row in the spool is what was spooled, whatever was handed over.
    const [stored] = await ctx.db.sequelize.query<{ message: Buffer }>('SELECT message FROM mta_spool WHERE id = :id', {
      type: QueryTypes.SELECT,
      replacements: { id: inMemory },
    });
    assert.ok(stored.message.equals(BINARY));
    // Given back (a deferral, a crash): the next claim reads the spool.
    await ctx.db.sequelize.query(`UPDATE mta_spool SET state = 'queued', lease_owner = NULL WHERE id = :id`, {
      replacements: { id: inMemory },
    });
    const [again] = await claimSpool(ctx.db.sql, 'test-worker', 60_000, NO_LANES, 10, messages);
    assert.is(again.id, inMemory);
    assert.ok(again.message.equals(BINARY));
  } finally {
    announcer.close();
    messages.close();
    await ctx.db.sequelize.query('DELETE FROM mta_spool');
  }
});

test('a message read from the spool in pieces comes back whole, whatever its length', async () => {
  // The read's pieces are 96,000 bytes (READ_MESSAGES): around and across their boundaries, and nothing.
  const lengths = [0, 1, 95_999, 96_000, 96_001, 192_000, 250_001];
  const messages = lengths.map((length) => randomBytes(length));
  const ids: string[] = [];
  for (const [index, message] of messages.entries()) ids.push(...(await spool(message, [`piece${index}.test`])));
  try {
    const claimed = await claimSpool(ctx.db.sql, 'test-worker', 60_000, NO_LANES, 20);
    const byId = new Map(claimed.map((row) => [row.id, row.message]));
    assert.is(claimed.length, lengths.length);
    for (const [index, id] of ids.entries())
      assert.ok(byId.get(id)!.equals(messages[index]), `${lengths[index]} bytes read exactly`);
  } finally {
    await ctx.db.sequelize.query('DELETE FROM mta_spool');
  }
});

test('a row leased by another worker between the claim and the read is left out', async () => {
  const [id] = await spool(BINARY, ['lost.test']);
  const claimed = await claimSpool(ctx.db.sql, 'test-worker', 60_000, NO_LANES, 10);
  assert.equal(
    claimed.map((row) => row.id),
    [id],
  );
  await ctx.db.sequelize.query(`UPDATE mta_spool SET state = 'queued', lease_owner = NULL WHERE id = :id`, {
    replacements: { id },
  });
  // Each lease this claim takes goes to another worker at once: the read that follows finds none of its own.
  await ctx.db.sequelize.query(`CREATE OR REPLACE FUNCTION steal_lease() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN NEW.lease_owner := 'another-worker'; RETURN NEW; END $$`);
  await ctx.db.sequelize.query(
    `CREATE TRIGGER steal_lease BEFORE UPDATE ON mta_spool FOR EACH ROW WHEN (NEW.state = 'leased') EXECUTE FUNCTION steal_lease()`,
  );
  try {
    assert.equal(await claimSpool(ctx.db.sql, 'test-worker', 60_000, NO_LANES, 10), []);
  } finally {
    await ctx.db.sequelize.query(
      'DROP TRIGGER steal_lease ON mta_spool; DROP FUNCTION steal_lease(); DELETE FROM mta_spool',
    );
  }
});

test('the hand-over holds at most its bound, dropping the oldest first', async () => {
  const announcer = new SpooledMessageAnnouncer();
  const messages = new SpooledMessages(250);
  try {
    await handedOver(announcer, ['a'], Buffer.alloc(100, 'a'));
    await handedOver(announcer, ['b'], Buffer.alloc(100, 'b'));
    await handedOver(announcer, ['c'], Buffer.alloc(100, 'c'));
    await handedOver(announcer, ['huge'], Buffer.alloc(251, 'h'));
    assert.equal(messages.size, { messages: 2, bytes: 200 });
    assert.is(messages.take('a'), undefined, 'the oldest went');
    assert.is(messages.take('huge'), undefined, 'a message over the bound is not held');
    assert.is(messages.take('b')!.toString(), 'b'.repeat(100));
    assert.is(messages.take('b'), undefined);
  } finally {
    announcer.close();
    messages.close();
  }
});

test('answered marks made while a statement of marks is on its way are written together by the next', async () => {
  const ids = await spool(BINARY, ['m1.test', 'm2.test', 'm3.test', 'm4.test']);
  const claimed = await claimSpool(ctx.db.sql, 'marker', 60_000, NO_LANES, 10);
  assert.is(claimed.length, 4);
  // Another worker's row is not marked.
  await ctx.db.sequelize.query(`UPDATE mta_spool SET lease_owner = 'other' WHERE id = :id`, {
    replacements: { id: ids[3] },
  });
  const statements: number[] = [];
  const counting = {
    ...ctx.db.sql,
    rows: ((statement, values, runner) => {
      statements.push((values[0] as string[]).length);
      return ctx.db.sql.rows(statement, values, runner);
    }) as typeof ctx.db.sql.rows,
  };
  const marks = new SpoolAnsweredMarks(counting, 'marker');
  const answered = (id: string): SpoolRecipient[] => [
    { address: `someone@${id}`, state: 'answered', response: '250 2.0.0 queued as ' + id },
  ];
  const results = await Promise.all(ids.map((id) => marks.mark(id, answered(id))));
  assert.equal(results, [true, true, true, false]);
  // The first went alone at once; the three made while it ran went in one statement.
  assert.equal(statements, [1, 3]);
  const rows = await ctx.db.sequelize.query<{ id: string; recipients: SpoolRecipient[]; sent: boolean }>(
    `SELECT id::text AS id, recipients, data_sent_at IS NOT NULL AS sent FROM mta_spool WHERE id IN (:ids) ORDER BY domain`,
    { replacements: { ids }, type: QueryTypes.SELECT },
  );
  assert.equal(
    rows.map((row) => [row.sent, row.recipients[0].state, row.recipients[0].response]),
    [
      [true, 'answered', `250 2.0.0 queued as ${ids[0]}`],
      [true, 'answered', `250 2.0.0 queued as ${ids[1]}`],
      [true, 'answered', `250 2.0.0 queued as ${ids[2]}`],
      [false, 'pending', null],
    ],
  );
  await ctx.db.sequelize.query('DELETE FROM mta_spool');
});

test.run();
