// The rule of delivery reports, on both of their paths: one outcome at a time (provider receivers,
// recordDeliveryOutcome) and the outbound MTA's batches (recordDeliveryOutcomes, two statements for a
// batch's deliveries). A delivery reported after a bounce or a complaint keeps the stronger status; a
// send's first delivery makes it DELIVERED; each report is a timeline row and an email.delivered event.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createWorld } from './helpers/fixtures.ts';
import type { DeliveryOutcome } from '../daemon/mail/delivery-outcome.ts';
import { recordDeliveryOutcome, recordDeliveryOutcomes } from '../daemon/modules/emails/outcomes.ts';
import { DeliverabilityTally } from '../daemon/modules/deliverability/tally.ts';

let ctx: TestContext;
let tenantId: string;

test.before(async () => {
  ctx = await createTestContext();
  ({ tenantId } = await createWorld(ctx.app));
});
test.after(async () => {
  await ctx?.close();
});

const q = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
  ctx.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });

async function createLog(status: string): Promise<string> {
  const id = randomUUID();
  await ctx.db.sequelize.query(
    `INSERT INTO email_logs (id, tenant_id, status, message_id, from_address, to_addresses, subject, sent_at)
     VALUES (:id, :tenantId, :status, :messageId, 'john@example.com', ARRAY['jane@example.org'], 'Hello', now())`,
    { replacements: { id, tenantId, status, messageId: `<${id}@example.com>` } },
  );
  return id;
}

async function stateOf(ids: string[]) {
  const logs = await q<{ id: string; status: string }>(`SELECT id, status FROM email_logs WHERE id IN (:ids)`, {
    ids,
  });
  const timeline = await q<{ email_id: string; n: number }>(
    `SELECT email_id, count(*)::int AS n FROM email_events WHERE email_id IN (:ids) AND type = 'delivered' GROUP BY 1`,
    { ids },
  );
  const events = await q<{ email_id: string; n: number }>(
    `SELECT data->>'emailId' AS email_id, count(*)::int AS n FROM events
      WHERE tenant_id = :tenantId AND type = 'email.delivered' AND data->>'emailId' IN (:ids) GROUP BY 1`,
    { ids, tenantId },
  );
  const count = (rows: Array<{ email_id: string; n: number }>, id: string) =>
    rows.find((row) => row.email_id === id)?.n ?? 0;
  return ids.map((id) => ({
    status: logs.find((log) => log.id === id)!.status,
    timeline: count(timeline, id),
    events: count(events, id),
  }));
}

const delivered = (emailId: string): DeliveryOutcome => ({ tenantId, emailId, type: 'delivered' });
const deps = () => ({ sequelize: ctx.db.sequelize, config: ctx.config, secrets: ctx.deps.secrets });

test("the MTA's batch path: SENT becomes DELIVERED; BOUNCED and COMPLAINED stay; every report is recorded", async () => {
  const ids = [await createLog('SENT'), await createLog('BOUNCED'), await createLog('COMPLAINED')];
  await ctx.db.sequelize.transaction(async (transaction) =>
    recordDeliveryOutcomes(
      deps(),
      { outcomes: ids.map(delivered), timeline: [], workerId: 'test-worker' },
      { transaction, run: await ctx.db.sql.inTransaction(transaction), tally: new DeliverabilityTally() },
    ),
  );
  assert.equal(await stateOf(ids), [
    { status: 'DELIVERED', timeline: 1, events: 1 },
    { status: 'BOUNCED', timeline: 1, events: 1 },
    { status: 'COMPLAINED', timeline: 1, events: 1 },
  ]);
});

test('one outcome at a time follows the same rule', async () => {
  const ids = [await createLog('SENT'), await createLog('BOUNCED'), await createLog('COMPLAINED')];
  for (const id of ids) await recordDeliveryOutcome(deps(), delivered(id));
  assert.equal(await stateOf(ids), [
    { status: 'DELIVERED', timeline: 1, events: 1 },
    { status: 'BOUNCED', timeline: 1, events: 1 },
    { status: 'COMPLAINED', timeline: 1, events: 1 },
  ]);
});

test.run();
