// Issue 52 §5: routed messages that arrive while a store transaction is in flight share the next one
// (receive.ts createRoutedStore, group commit). Each caller's promise resolves once its rows are
// committed; one message that cannot be stored fails alone, the others of its group are stored.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createWorld } from './helpers/fixtures.ts';
import { createRoutedStore } from '../daemon/modules/inbound-routing/receive.ts';
import { parseMessage, type RoutedRead } from '../daemon/modules/inbound-routing/parse.ts';
import type { InboundAuth } from '../shared/schemas/inbound-message.ts';

let ctx: TestContext;
test.before(async () => {
  ctx = await createTestContext();
});
test.after(async () => {
  await ctx?.close();
});

const AUTH: InboundAuth = {
  spf: { result: 'none', domain: null, clientIp: '192.0.2.10', explanation: null },
  dkim: { result: 'none', signatures: [] },
  dmarc: { result: 'none', domain: null, policy: null },
  arc: { result: 'none', instance: 0, sealer: null },
};

async function readOf(subject: string): Promise<RoutedRead> {
  const raw = Buffer.from(`From: ann@sender.test\r\nTo: in@acme.test\r\nSubject: ${subject}\r\n\r\nHello\r\n`);
  return { ...(await parseMessage(raw, AUTH)), rawGzip: new Uint8Array(gzipSync(raw)) };
}

test('messages stored together: every one committed; one that cannot be stored fails alone', async () => {
  const { tenantId } = await createWorld(ctx.app);
  const store = createRoutedStore({ sequelize: ctx.db.sequelize, config: ctx.config, secrets: ctx.deps.secrets });
  const recipient = (tenant: string) => ({
    tenantId: tenant,
    plan: 'pro',
    address: 'in@acme.test',
    mailboxHash: null,
    route: null,
  });
  const envelope = { mailFrom: 'ann@sender.test', clientIp: '192.0.2.10', size: 100 };
  // The first goes alone; the others arrive while its transaction is in flight and go together. The
  // fourth names a tenant that does not exist (a foreign key refuses its row).
  const outcomes = await Promise.allSettled(
    ['one', 'two', 'three', 'bad', 'five', 'six'].map(async (subject) =>
      store.store(envelope, [recipient(subject === 'bad' ? randomUUID() : tenantId)], await readOf(subject)),
    ),
  );
  assert.equal(
    outcomes.map((o) => o.status),
    ['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
  );
  const rows = await ctx.db.sequelize.query<{ id: string; subject: string }>(
    `SELECT id, subject FROM inbound_messages WHERE tenant_id = :tenantId ORDER BY subject`,
    { type: QueryTypes.SELECT, replacements: { tenantId } },
  );
  assert.equal(
    rows.map((r) => r.subject),
    ['five', 'one', 'six', 'three', 'two'],
  );
  const ids = outcomes.flatMap((o) => (o.status === 'fulfilled' ? o.value.map((s) => s.id) : []));
  assert.equal(ids.sort(), rows.map((r) => r.id).sort(), 'each caller got the id of its committed row');
});

test.run();
