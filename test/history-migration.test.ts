// Migrations 0200–0207 on a seeded database: logs, timeline rows, captured messages, events and
// webhook deliveries spread over several months move into the monthly partitions without losing or
// changing a row; down brings back the plain tables with every row.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createWorld } from './helpers/fixtures.ts';
import { createMigrator, migrateUp } from '../daemon/db/migrate.ts';
import { listPartitions, PARTITIONED_TABLES } from '../daemon/db/partitions.ts';

const FIRST = '0200-partition-email-logs';
let ctx: TestContext;
test.before(async () => {
  ctx = await createTestContext();
});
test.after(async () => {
  await ctx?.close();
});

const q = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
  ctx.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });

/** Every row of every history table, as text, in a stable order. */
async function snapshot(): Promise<Record<string, string[]>> {
  const result: Record<string, string[]> = {};
  for (const table of PARTITIONED_TABLES) {
    // bodies_removed_at only exists after 0207: compare the columns the old schema had.
    const rows = await q<{ row: string }>(
      `SELECT (to_jsonb(t) - 'bodies_removed_at')::text AS row FROM ${table} t ORDER BY id`,
    );
    result[table] = rows.map((r) => r.row);
  }
  return result;
}

test('every row of the history tables survives partitioning, in the partition of its month; down keeps them too', async () => {
  const { tenantId, asKey } = await createWorld(ctx.app);
  const endpoint = await ctx.app.inject({
    method: 'POST',
    url: '/webhooks/endpoints',
    headers: asKey,
    payload: { url: 'https://hooks.example.test/x', events: ['email.sent'] },
  });
  const endpointId = endpoint.json().id as string;

  await (await createMigrator(ctx.db.sequelize)).down({ to: FIRST });
  const [kind] = await q<{ relkind: string }>(`SELECT relkind FROM pg_class WHERE relname = 'email_logs'`);
  assert.is(kind.relkind, 'r', 'the old schema: a plain table');

  // Seven months of history, 40 logs a month, each with a timeline row, a captured message, an event
  // and a webhook delivery; one log from two years ago.
  await ctx.db.sequelize.query(
    `INSERT INTO email_logs (tenant_id, message_id, from_address, to_addresses, subject, html_body, status, created_at, updated_at)
     SELECT :t, '<m' || g || '@acme.test>', 'app@acme.test', ARRAY['Ann <ann' || g || '@example.org>'], 's' || g, '<p>' || g || '</p>', 'SENT',
            now() - make_interval(days => g * 5), now() - make_interval(days => g * 5)
       FROM generate_series(0, 41) AS g;
     INSERT INTO email_logs (tenant_id, message_id, from_address, subject, created_at) VALUES (:t, '<ancient@acme.test>', 'app@acme.test', 'old', now() - interval '2 years');
     INSERT INTO email_events (tenant_id, email_id, type, created_at) SELECT tenant_id, id, 'sent', created_at + interval '1 second' FROM email_logs;
     INSERT INTO captured_messages (tenant_id, email_id, message_id, raw, created_at) SELECT tenant_id, id, message_id, 'raw ' || subject, created_at FROM email_logs;
     INSERT INTO events (tenant_id, type, email_id, data, fanned_out_at, created_at) SELECT tenant_id, 'email.sent', id, '{}', created_at, created_at FROM email_logs;
     INSERT INTO webhook_deliveries (tenant_id, endpoint_id, event_id, event_type, payload, status, due_at, created_at)
       SELECT tenant_id, :e, id, 'email.sent', '{"id":"x"}', 'succeeded', NULL, created_at FROM events`,
    { replacements: { t: tenantId, e: endpointId } },
  );
  const before = await snapshot();
  for (const table of PARTITIONED_TABLES) assert.is(before[table].length, 43, table);

  const applied = await migrateUp(ctx.db.sequelize);
  assert.ok(applied.includes(FIRST) && applied.includes('0207-email-log-bodies-removed'), applied.join());
  assert.equal(await snapshot(), before, 'every row, every column unchanged');

  for (const table of PARTITIONED_TABLES) {
    const partitions = await listPartitions(ctx.db.sequelize, table);
    assert.ok(partitions.length >= 10, `${table}: ${partitions.join()}`);
    const [stray] = await q<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}_default`);
    assert.is(stray.n, 0, `${table}: every row is in the partition of its month`);
  }
  const [ancient] = await q<{ partition: string }>(
    `SELECT tableoid::regclass::text AS partition FROM email_logs WHERE message_id = '<ancient@acme.test>'`,
  );
  assert.match(ancient.partition, /^email_logs_p\d{4}_\d{2}$/);
  const found = await ctx.app.inject({ method: 'GET', url: '/emails/logs?to=ann7@example.org', headers: asKey });
  assert.equal(
    found.json().data.map((log: { messageId: string }) => log.messageId),
    ['<m7@acme.test>'],
    'migrated rows are searchable',
  );

  await (await createMigrator(ctx.db.sequelize)).down({ to: FIRST });
  assert.equal(await snapshot(), before, 'down: the plain tables hold every row');
  await migrateUp(ctx.db.sequelize);
  assert.equal(await snapshot(), before);
});

test.run();
