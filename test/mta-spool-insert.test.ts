// The spool's insert as a group commit (mta/sql/spool-insert.ts): messages spooled while a statement is
// in flight go together in the next one; each row holds its own message's bytes (every byte value, any
// length) and its own log fields; a message spooled before adds nothing while the others of its group
// add theirs; a group whose statement fails (one message's row refused) is written message by message.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import type { Sql } from '../daemon/db/sql.ts';
import { SpoolWriter, type SpoolInsert } from '../daemon/mta/sql/spool-insert.ts';

let ctx: TestContext;

test.before(async () => {
  ctx = await createTestContext({ env: { DELIVERY: 'direct' } });
});
test.after(async () => {
  await ctx?.close();
});

/** The database handle, noting how many messages each statement run through it carried. */
function countingSql(sql: Sql): { sql: Sql; statements: number[] } {
  const statements: number[] = [];
  const counting = Object.create(sql) as Sql;
  counting.rows = (statement, values, runner) => {
    assert.is(statement.name, 'mta_spool_insert');
    // $5: the messages' tenants, one entry per message.
    statements.push((values[4] as unknown[]).length);
    return sql.rows(statement, values, runner);
  };
  return { sql: counting, statements };
}

/** Message `n`: every byte value, then `n` bytes of its own, so no two are alike or of one length. */
function messageOf(n: number): Buffer {
  return Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, byte) => byte)), Buffer.alloc(n * 997, n)]);
}

function insertOf(n: number, domains: string[], emailId: string | null = randomUUID()): SpoolInsert {
  return {
    ids: domains.map(() => randomUUID()),
    tenantId: null,
    emailId,
    envelopeFrom: `bounces+${n}@acme.test`,
    message: messageOf(n),
    expiryHours: n + 1,
    byDomain: new Map(domains.map((domain) => [domain, [`user${n}@${domain}`, `other${n}@${domain}`]])),
    log: { createdAt: new Date(Date.UTC(2026, 10, n + 1)).toISOString(), attempt: n, sentHeaders: `{"n":"${n}"}` },
  };
}

interface StoredRow {
  id: string;
  email_id: string | null;
  domain: string;
  envelope_from: string;
  message: Buffer;
  recipients: Array<{ address: string; state: string }>;
  hours: number;
  log_attempt: number | null;
  log_sent_headers: string | null;
}

async function storedRows(ids: string[]): Promise<Map<string, StoredRow>> {
  const rows = await ctx.db.sequelize.query<StoredRow>(
    `SELECT id::text AS id, email_id::text AS email_id, domain, envelope_from, message, recipients,
            round(extract(epoch FROM expires_at - created_at) / 3600)::int AS hours, log_attempt, log_sent_headers
       FROM mta_spool WHERE id = ANY(:ids::uuid[])`,
    { type: QueryTypes.SELECT, replacements: { ids: `{${ids.join(',')}}` } },
  );
  return new Map(rows.map((row) => [row.id, row]));
}

test('messages spooled at once share statements; each row holds its own message, recipients and log fields', async () => {
  const { sql, statements } = countingSql(ctx.db.sql);
  const writer = new SpoolWriter(sql);
  const inserts = Array.from({ length: 12 }, (_, n) =>
    insertOf(n, n % 3 === 0 ? [`a${n}.test`, `b${n}.test`] : [`a${n}.test`]),
  );
  const added = await Promise.all(inserts.map((input) => writer.spool(input)));
  assert.equal(
    added,
    inserts.map((input) => input.ids.length),
  );
  assert.ok(statements.length < inserts.length, `${statements.length} statements for ${inserts.length} messages`);
  assert.is(statements[0], 1, 'the first message goes at once, alone');
  assert.is(
    statements.reduce((sum, n) => sum + n, 0),
    inserts.length,
  );
  const stored = await storedRows(inserts.flatMap((input) => input.ids));
  assert.is(stored.size, 16);
  inserts.forEach((input, n) => {
    [...input.byDomain].forEach(([domain, addresses], index) => {
      const row = stored.get(input.ids[index])!;
      assert.ok(row.message.equals(input.message), `message ${n}'s bytes in its row for ${domain}`);
      assert.is(row.domain, domain);
      assert.is(row.email_id, input.emailId);
      assert.is(row.envelope_from, `bounces+${n}@acme.test`);
      assert.equal(
        row.recipients.map((r) => [r.address, r.state]),
        addresses.map((address) => [address, 'pending']),
      );
      assert.is(row.hours, n + 1, 'its own expiry');
      assert.is(row.log_attempt, n);
      assert.is(row.log_sent_headers, `{"n":"${n}"}`);
    });
  });
});

test('a message spooled before adds nothing; the others of its group add theirs', async () => {
  const { sql, statements } = countingSql(ctx.db.sql);
  const writer = new SpoolWriter(sql);
  const first = insertOf(1, ['again.test']);
  assert.is(await writer.spool(first), 1);
  await new Promise((resolve) => setImmediate(resolve)); // the lane's write is over
  // The same send spooled again (its job ran twice): new row ids, the same email and domain.
  const again = { ...first, ids: [randomUUID()] };
  const others = [insertOf(2, ['fresh2.test']), insertOf(3, ['fresh3.test', 'fresh3b.test'])];
  const pending = writer.spool(insertOf(4, ['lead.test'])); // in flight: the next three go together
  const added = await Promise.all([pending, writer.spool(again), ...others.map((input) => writer.spool(input))]);
  assert.equal(added, [1, 0, 1, 2]);
  assert.equal(statements.slice(1), [1, 3], 'the lead alone, then the three that came while it was in flight');
  const [{ n }] = await ctx.db.sequelize.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM mta_spool WHERE email_id = :emailId`,
    { type: QueryTypes.SELECT, replacements: { emailId: first.emailId } },
  );
  assert.is(n, 1);
});

test('a group whose statement fails is written message by message: only the refused one fails', async () => {
  const { sql, statements } = countingSql(ctx.db.sql);
  const writer = new SpoolWriter(sql);
  // No such tenant: its row breaks the spool's foreign key.
  const refused = { ...insertOf(5, ['refused.test']), tenantId: randomUUID() };
  const good = [insertOf(6, ['good6.test']), insertOf(7, ['good7.test'])];
  const lead = writer.spool(insertOf(8, ['lead8.test']));
  const results = await Promise.allSettled([lead, writer.spool(refused), ...good.map((input) => writer.spool(input))]);
  assert.equal(
    results.map((result) => result.status),
    ['fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
  );
  assert.match(String((results[1] as PromiseRejectedResult).reason), /foreign key/);
  assert.equal(statements, [1, 3, 1, 1, 1], 'the lead, the group that failed, then its three one by one');
  const stored = await storedRows([...refused.ids, ...good.flatMap((input) => input.ids)]);
  assert.equal([...stored.values()].map((row) => row.domain).sort(), ['good6.test', 'good7.test']);
});

test.run();
