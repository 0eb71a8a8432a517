// Migration 0120 on a seeded database: pending deliveries waiting as 'webhook' jobs move to
// webhook_deliveries.due_at without losing one (due, scheduled for a retry, leased by a worker that
// is gone), settled and API-only rows get no due time, other 'webhook' jobs stay; down puts the jobs back.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createWorld } from './helpers/fixtures.ts';
import { createTestDispatcher, startReceiver, type Receiver } from './helpers/webhook-receiver.ts';
import { createMigrator, migrateUp } from '../daemon/db/migrate.ts';

const MIGRATION = '0120-webhook-delivery-schedule';
let ctx: TestContext;
let receiver: Receiver;

test.before(async () => {
  ctx = await createTestContext();
  receiver = await startReceiver();
});
test.after(async () => {
  await receiver?.close();
  await ctx?.close();
});

const q = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
  ctx.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });

test('pending delivery jobs become due deliveries; nothing is lost; down brings the jobs back', async () => {
  const { asKey, tenantId } = await createWorld(ctx.app);
  const created = await ctx.app.inject({
    method: 'POST',
    url: '/webhooks/endpoints',
    headers: asKey,
    payload: { url: receiver.url, events: ['email.sent'] },
  });
  const endpointId = created.json().id as string;

  await (await createMigrator(ctx.db.sequelize)).down({ to: MIGRATION });
  const columns = await q<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns WHERE table_name = 'webhook_deliveries' AND column_name = 'due_at'`,
  );
  assert.is(columns.length, 0, 'the old scheme');

  // The old scheme: a delivery row and, while it is pending, a 'webhook' job carrying its id.
  const insert = async (name: string, status: string) => {
    const [row] = await q<{ id: string }>(
      `INSERT INTO webhook_deliveries (tenant_id, endpoint_id, event_type, payload, status)
       VALUES (:tenantId, :endpointId, 'email.sent', CAST(:payload AS json), :status) RETURNING id`,
      {
        tenantId,
        endpointId,
        payload: JSON.stringify({
          id: name,
          type: 'email.sent',
          createdAt: new Date().toISOString(),
          tenantId,
          data: {},
        }),
        status,
      },
    );
    return row.id;
  };
  const job = (deliveryId: string, runAt: string, lockedBy: string | null = null) =>
    ctx.db.sequelize.query(
      `INSERT INTO jobs (queue, tenant_id, payload, key, run_at, max_attempts, locked_by, locked_until)
     VALUES ('webhook', :tenantId, jsonb_build_object('deliveryId', CAST(:deliveryId AS text)), 'delivery:' || :deliveryId, ${runAt}, 10000,
             CAST(:lockedBy AS text), CASE WHEN CAST(:lockedBy AS text) IS NULL THEN NULL ELSE now() + interval '1 minute' END)`,
      { replacements: { tenantId, deliveryId, lockedBy } },
    );
  const due = await insert('due', 'pending');
  await job(due, `now() - interval '1 minute'`);
  const later = await insert('later', 'pending');
  await job(later, `now() + interval '1 hour'`);
  const leased = await insert('leased', 'pending');
  await job(leased, 'now()', 'old-worker:1');
  const settled = await insert('settled', 'succeeded');
  await job(settled, 'now()');
  const apiOnly = await insert('api-only', 'pending');
  await ctx.db.sequelize.query(
    `INSERT INTO jobs (queue, payload, key) VALUES ('webhook', '{"kind":"sns-confirm","subscribeUrl":"https://sns.example/x"}', 'sns-confirm:x')`,
  );

  assert.ok((await migrateUp(ctx.db.sequelize)).includes(MIGRATION));

  const rows = Object.fromEntries(
    (
      await q<{ id: string; status: string; due: string | null }>(
        `SELECT id, status, CASE WHEN due_at IS NULL THEN NULL WHEN due_at <= now() THEN 'now' ELSE 'later' END AS due FROM webhook_deliveries WHERE endpoint_id = :endpointId`,
        { endpointId },
      )
    ).map((row) => [row.id, row]),
  );
  assert.equal(rows[due].due, 'now');
  assert.equal(rows[later].due, 'later');
  assert.equal(rows[leased].due, 'now', "the old worker's lease does not survive the move");
  assert.equal([rows[settled].status, rows[settled].due], ['succeeded', null]);
  assert.equal([rows[apiOnly].status, rows[apiOnly].due], ['pending', null]);
  const [later1] = await q<{ exact: boolean }>(
    `SELECT abs(extract(epoch FROM d.due_at - (now() + interval '1 hour'))) < 60 AS exact FROM webhook_deliveries d WHERE id = :id`,
    { id: later },
  );
  assert.ok(later1.exact, 'a scheduled retry keeps its time');
  const jobs = await q<{ payload: { kind?: string } }>(`SELECT payload FROM jobs WHERE queue = 'webhook'`);
  assert.equal(
    jobs.map((row) => row.payload.kind),
    ['sns-confirm'],
    'delivery jobs are gone, the SNS confirmation stays',
  );

  // The new worker delivers exactly the due ones.
  const dispatcher = createTestDispatcher(ctx);
  await dispatcher.claim();
  await dispatcher.idle();
  await dispatcher.stop(1_000);
  assert.equal(receiver.requests.map((r) => JSON.parse(r.rawBody).id).sort(), ['due', 'leased']);

  await (await createMigrator(ctx.db.sequelize)).down({ to: MIGRATION });
  const back = await q<{ delivery: string; later: boolean }>(
    `SELECT payload->>'deliveryId' AS delivery, run_at > now() AS later FROM jobs WHERE queue = 'webhook' AND payload ? 'deliveryId'`,
  );
  assert.equal(back, [{ delivery: later, later: true }], 'down queues what is still pending again');
  await migrateUp(ctx.db.sequelize);
});

test.run();
