// The batched drain (daemon/jobs/send-loop.ts on daemon/modules/emails/drain.ts): sends accepted through the
// API are claimed with their logs, delivered to a real SMTP server, and their outcomes recorded a
// batch at a time — log status, timeline, events with their webhook fan-out, job deletion or retry.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import pino from 'pino';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { addVerifiedDomain, createWorld } from './helpers/fixtures.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp-sink.ts';
import { runSendLoop } from '../daemon/jobs/send-loop.ts';
import { DEFAULT_TUNING } from '../daemon/jobs/tuning.ts';
import type { ThreadData, ThreadRuntime } from '../daemon/jobs/thread.ts';
import { createMetricsReporter } from '../daemon/modules/metrics/reporter.ts';
import { claimSends, extendSendLeases, recordSendOutcomes } from '../daemon/modules/emails/drain.ts';
import { RECORD_OUTCOMES, UNCHANGED_LOG_FIELDS } from '../daemon/modules/emails/sql/record-outcomes.ts';
import { CLAIM_SENDS } from '../daemon/modules/emails/sql/claim-sends.ts';
import { waitFor } from './helpers/wait.ts';
import { randomUUID } from 'node:crypto';
import { spoolMessage } from '../daemon/mta/sql/spool-insert.ts';
import { APPLY_SPOOLED_LOGS } from '../daemon/modules/emails/sql/spooled-log.ts';
import { outcomesOf } from '../daemon/modules/emails/send-job.ts';
import type { Sql } from '../daemon/db/sql.ts';

let ctx: TestContext;
let sink: SmtpSink;
let world: Awaited<ReturnType<typeof createWorld>>;

test.before(async () => {
  sink = await startSmtpSink();
  ctx = await createTestContext({
    env: { SMTP_URL: `smtp://127.0.0.1:${sink.port}`, PUBLIC_URL: 'http://mail.example.test' },
  });
  world = await createWorld(ctx.app);
  await addVerifiedDomain(ctx.db.sequelize, ctx.deps.secrets, world.tenantId);
  await ctx.db.sequelize.query(
    `INSERT INTO webhook_endpoints (tenant_id, url, events, secret_encrypted) VALUES (:tenantId, 'https://hooks.example.test/a', ARRAY['email.sent', 'email.failed'], 'x')`,
    { replacements: { tenantId: world.tenantId } },
  );
});
test.after(async () => {
  await ctx?.close();
  await sink?.close();
});

const q = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
  ctx.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });

async function send(to: string, subject: string): Promise<string> {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: world.asKey,
    payload: { from: 'Acme <news@acme.test>', to, subject, htmlBody: `<p>${subject}</p>`, textBody: subject },
  });
  assert.is(res.statusCode, 202, res.body);
  return res.json().id as string;
}

/** Runs the drain loop, as the send worker thread does, until no send job is due and none is held. */
async function drain(): Promise<void> {
  const stop = new AbortController();
  const runtime = {
    data: { databaseUrl: '' } as ThreadData,
    ctx: {
      config: ctx.config,
      secrets: ctx.deps.secrets,
      ...ctx.workerResources,
      sequelize: ctx.db.sequelize,
      sql: ctx.db.sql,
      log: pino({ level: 'silent' }),
      workerId: 'drain-test',
    },
    tuning: { ...DEFAULT_TUNING, batchSize: 4, concurrency: 8, embeddedPollMs: 20 },
    signal: stop.signal,
    // Poll rather than LISTEN: the test needs no listener connection.
    embedded: true,
    metrics: createMetricsReporter(),
  } satisfies ThreadRuntime;
  const loop = runSendLoop(runtime);
  await waitFor(
    'no send job due or leased',
    async () => {
      const [row] = await q<{ n: number }>(
        `SELECT count(*)::int AS n FROM jobs WHERE queue = 'send' AND (locked_by IS NOT NULL OR run_at <= now())`,
      );
      return row.n === 0;
    },
    { timeoutMs: 120_000 },
  );
  stop.abort();
  await loop;
  runtime.metrics.close();
}

test('a batch is delivered and recorded: logs SENT, timeline, events fanned out to webhooks, jobs gone', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) ids.push(await send(`reader${i}@example.test`, `Batch ${i}`));
  await drain();

  assert.is(sink.messages.length, 6);
  for (const message of sink.messages) assert.match(message.raw, /^DKIM-Signature: .*d=acme\.test/m);
  const logs = await q<{
    id: string;
    status: string;
    sent_at: Date | null;
    smtp_response: string | null;
    sent_headers: Record<string, string> | null;
    attempts: number;
  }>(`SELECT id::text, status, sent_at, smtp_response, sent_headers, attempts FROM email_logs WHERE id IN (:ids)`, {
    ids,
  });
  assert.is(logs.length, 6);
  for (const log of logs) {
    assert.is(log.status, 'SENT');
    assert.ok(log.sent_at);
    assert.match(log.smtp_response ?? '', /^250/);
    assert.is(log.sent_headers?.['X-Service-Email-Id'], log.id);
    assert.is(log.attempts, 1);
  }
  const timeline = await q<{ email_id: string; type: string }>(
    `SELECT email_id::text, type FROM email_events WHERE email_id IN (:ids) AND type = 'sent'`,
    { ids },
  );
  assert.is(timeline.length, 6);
  const events = await q<{
    id: string;
    email_id: string;
    created_at: Date;
    data: Record<string, unknown>;
    fanned_out_at: Date | null;
  }>(
    `SELECT id::text, email_id::text, created_at, data, fanned_out_at FROM events WHERE type = 'email.sent' AND email_id IN (:ids)`,
    { ids },
  );
  assert.is(events.length, 6);
  const deliveries = await q<{
    event_id: string;
    event_type: string;
    payload: {
      id: string;
      type: string;
      createdAt: string;
      tenantId: string;
      data: { emailId: string; subject: string };
    };
    due_at: Date | null;
  }>(`SELECT event_id::text, event_type, payload, due_at FROM webhook_deliveries WHERE event_id IN (:eventIds)`, {
    eventIds: events.map((e) => e.id),
  });
  assert.is(deliveries.length, 6);
  for (const event of events) {
    assert.ok(event.fanned_out_at);
    const delivery = deliveries.find((d) => d.event_id === event.id)!;
    // The payload carries exactly what the events row stores.
    assert.equal(delivery.payload.id, event.id);
    assert.is(delivery.payload.type, 'email.sent');
    assert.is(delivery.payload.createdAt, new Date(event.created_at).toISOString());
    assert.is(delivery.payload.tenantId, world.tenantId);
    assert.is(delivery.payload.data.emailId, event.email_id);
    assert.equal(delivery.payload.data, event.data);
    assert.ok(delivery.due_at);
  }
  const [jobs] = await q<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE queue = 'send'`);
  assert.is(jobs.n, 0);
});

test('a refused recipient is retried later or fails for good (with its bounce recorded)', async () => {
  sink.messages.length = 0;
  sink.behaviour.onRcpt = (address) =>
    address === 'later@example.test'
      ? { code: 451, message: '4.3.0 try again later' }
      : address === 'ghost@example.test'
        ? { code: 550, message: '5.1.1 no such user' }
        : null;
  const later = await send('later@example.test', 'Deferred');
  const ghost = await send('ghost@example.test', 'Bounced');
  await drain();
  sink.behaviour.onRcpt = undefined;

  const [deferred] = await q<{ status: string; error: string }>(`SELECT status, error FROM email_logs WHERE id = :id`, {
    id: later,
  });
  assert.is(deferred.status, 'QUEUED');
  assert.match(deferred.error, /try again later/);
  const [job] = await q<{ attempts: number; locked_by: string | null; later: boolean; last_error: string }>(
    `SELECT attempts, locked_by, run_at > now() AS later, last_error FROM jobs WHERE payload->>'emailId' = :id`,
    { id: later },
  );
  assert.is(job.attempts, 1);
  assert.is(job.locked_by, null);
  assert.ok(job.later);
  assert.match(job.last_error, /try again later/);
  const deferredRows = await q<{ type: string; data: { responseCode: number } }>(
    `SELECT type, data FROM email_events WHERE email_id = :id AND type = 'deferred'`,
    { id: later },
  );
  assert.is(deferredRows.length, 1);
  assert.is(deferredRows[0].data.responseCode, 451);

  const [bounced] = await q<{ status: string }>(`SELECT status FROM email_logs WHERE id = :id`, { id: ghost });
  assert.is(bounced.status, 'BOUNCED');
  const types = (
    await q<{ type: string }>(`SELECT type FROM events WHERE email_id = :id ORDER BY created_at`, { id: ghost })
  ).map((e) => e.type);
  assert.equal(types, ['email.failed', 'email.bounced']);
  const suppressed = await q<{ reason: string }>(
    `SELECT reason FROM suppressions WHERE tenant_id = :tenantId AND email = 'ghost@example.test'`,
    { tenantId: world.tenantId },
  );
  assert.is(suppressed[0]?.reason, 'bounce');
  const [gone] = await q<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE payload->>'emailId' = :id`, {
    id: ghost,
  });
  assert.is(gone.n, 0);
  await ctx.db.sequelize.query(`DELETE FROM jobs WHERE queue = 'send'`);
});

test('a worker that lost the lease records the log but leaves the job to its new holder', async () => {
  const id = await send('lease@example.test', 'Lease');
  const [claimed] = await claimSends(ctx.db.sql, 'worker-a', 10, 60_000);
  assert.is(claimed.emailId, id);
  assert.is(claimed.log?.subject, 'Lease');
  // The claim reads the log without writing it: the lease keeps it from a second worker.
  const [unwritten] = await q<{ status: string; attempts: number }>(
    `SELECT status, attempts FROM email_logs WHERE id = :id`,
    { id },
  );
  assert.equal(unwritten, { status: 'QUEUED', attempts: 0 });
  // A second claim finds nothing: the job is leased.
  assert.is((await claimSends(ctx.db.sql, 'worker-b', 10, 60_000)).length, 0);
  assert.equal(await extendSendLeases(ctx.db.sql, [claimed.jobId], 'worker-a', 60_000), [claimed.jobId]);
  await ctx.db.sequelize.query(`UPDATE jobs SET locked_by = 'worker-b' WHERE id = :id`, {
    replacements: { id: claimed.jobId },
  });
  // The lease is gone: worker-a can no longer extend it.
  assert.equal(await extendSendLeases(ctx.db.sql, [claimed.jobId], 'worker-a', 60_000), []);
  const recorded = await recordSendOutcomes(ctx.db.sql, 'worker-a', {
    logs: [
      {
        emailId: id,
        createdAt: claimed.log!.created_at,
        ...UNCHANGED_LOG_FIELDS,
        status: 'SENT',
        attempt: 1,
        error: null,
        smtpResponse: '250 ok',
        captured: false,
      },
    ],
    timeline: [],
    events: [],
    done: [claimed.jobId],
    retry: [],
    fail: [],
  });
  assert.is(recorded.settled, 0);
  const [job] = await q<{ locked_by: string }>(`SELECT locked_by FROM jobs WHERE id = :id`, { id: claimed.jobId });
  assert.is(job.locked_by, 'worker-b');
  const [log] = await q<{ status: string; smtp_response: string; attempts: number }>(
    `SELECT status, smtp_response, attempts FROM email_logs WHERE id = :id`,
    { id },
  );
  // The attempt is counted with its outcome.
  assert.equal(log, { status: 'SENT', smtp_response: '250 ok', attempts: 1 });
});

test('spooling keeps the log’s fields in its rows, written once with the first outcome; its commit waits for no WAL flush', async () => {
  const deferredId = await send('deferred@example.test', 'Spooled');
  const deliveredId = await send('delivered@example.test', 'Spooled');
  const claimed = await claimSends(ctx.db.sql, 'worker-a', 10, 60_000);
  const createdAt = (id: string) => claimed.find((c) => c.emailId === id)!.log!.created_at;
  const spool = (sql: Sql, id: string, rowId: string, tenantId = world.tenantId) =>
    spoolMessage(sql, {
      ids: [rowId],
      tenantId,
      emailId: id,
      envelopeFrom: 'bounces@acme.test',
      message: Buffer.from('Subject: Spooled\r\n\r\nhi\r\n'),
      expiryHours: 1,
      byDomain: new Map([['example.test', [`${id === deferredId ? 'deferred' : 'delivered'}@example.test`]]]),
      log: {
        createdAt: createdAt(id),
        attempt: 3,
        sentHeaders: JSON.stringify({ subject: 'Spooled' }),
        subject: null,
        // A template's rendered content (for the second log) is kept with the row and written with the outcome.
        html: id === deliveredId ? '<p>Rendered</p>' : null,
        text: null,
      },
    });
  const read = async (id: string) =>
    (
      await q<{ status: string; attempts: number; sent_headers: unknown; sent: boolean; html_body: string }>(
        `SELECT status, attempts, sent_headers, sent_at IS NOT NULL AS sent, html_body FROM email_logs WHERE id = :id`,
        { id },
      )
    )[0];
  const queued = { status: 'QUEUED', attempts: 0, sent_headers: null, sent: false, html_body: '<p>Spooled</p>' };
  const written = (status: string) => ({
    ...queued,
    status,
    attempts: 3,
    sent_headers: { subject: 'Spooled' },
    sent: true,
  });
  const apply = (rowId: string) => ctx.db.sql.rows<{ id: string }>(APPLY_SPOOLED_LOGS, [[rowId]]);

  // Another tenant's spool row does not write this tenant's log.
  const other = await createWorld(ctx.app);
  const otherRow = randomUUID();
  assert.is(await spool(ctx.db.sql, deferredId, otherRow, other.tenantId), 1);
  assert.equal(await apply(otherRow), []);
  assert.equal(await read(deferredId), queued);
  await q(`DELETE FROM mta_spool WHERE email_id = :id RETURNING id`, { id: deferredId });

  // In a transaction of its own the statement's setting shows: the commit does not wait for the flush.
  const deferredRow = randomUUID();
  await ctx.db.sql.transaction(async (client) => {
    const inClient = { ...ctx.db.sql, rows: (statement, values) => ctx.db.sql.rows(statement, values, client) } as Sql;
    assert.is(await spool(inClient, deferredId, deferredRow), 1);
    const [{ synchronous_commit }] = (await client.query<{ synchronous_commit: string }>('SHOW synchronous_commit'))
      .rows;
    assert.is(synchronous_commit, 'off');
  });
  // Spooling does not write the log: its row keeps the fields.
  assert.equal(await read(deferredId), queued);
  const [kept] = await q<{ log_attempt: number; log_sent_headers: string; log_created_at: string }>(
    `SELECT log_attempt, log_sent_headers, log_created_at::text FROM mta_spool WHERE id = :id`,
    { id: deferredRow },
  );
  assert.equal(kept, {
    log_attempt: 3,
    log_sent_headers: '{"subject":"Spooled"}',
    log_created_at: kept.log_created_at,
  });
  // The job runs again (a crash before its outcome was recorded): nothing is spooled twice.
  assert.is(await spool(ctx.db.sql, deferredId, randomUUID()), 0);

  // An attempt that delivered nothing (deferred) writes them: SENDING, counted once however often it is applied.
  assert.equal(await apply(deferredRow), [{ id: deferredId }]);
  assert.equal(await read(deferredId), written('SENDING'));
  assert.equal(await apply(deferredRow), []);
  assert.equal(await read(deferredId), written('SENDING'));

  // A delivery writes them with DELIVERED, in the one update of its outcome; after a deferral, not again.
  const deliveredRow = randomUUID();
  // The log's row version (xmin) is the accept's until the outcome: spooling wrote no new one.
  const version = async () =>
    (await q<{ xmin: string }>(`SELECT xmin::text FROM email_logs WHERE id = :id`, { id: deliveredId }))[0].xmin;
  const accepted = await version();
  assert.is(await spool(ctx.db.sql, deliveredId, deliveredRow), 1);
  assert.is(await version(), accepted);
  const delivered = (id: string, spoolId: string) => ({
    emailId: id,
    createdAt: createdAt(id),
    ...UNCHANGED_LOG_FIELDS,
    status: 'DELIVERED' as const,
    error: null,
    spoolId,
  });
  await recordSendOutcomes(ctx.db.sql, 'worker-a', {
    logs: [delivered(deliveredId, deliveredRow), delivered(deferredId, deferredRow)],
    timeline: [],
    events: [],
    done: [],
    retry: [],
    fail: [],
  });
  assert.equal(await read(deliveredId), { ...written('DELIVERED'), html_body: '<p>Rendered</p>' });
  assert.equal(await read(deferredId), written('DELIVERED'));
  // The drain's record of a spooled attempt settles the job and adds the timeline row, the log untouched.
  const recorded = await recordSendOutcomes(
    ctx.db.sql,
    'worker-a',
    outcomesOf(
      [
        {
          status: { status: 'SENT' },
          log: null,
          timeline: [{ tenantId: world.tenantId, emailId: deferredId, type: 'spooled', data: { response: 'spooled' } }],
          events: [],
          bounces: [],
          keepSent: false,
        },
      ],
      { done: [claimed.find((c) => c.emailId === deferredId)!.jobId], retry: [], fail: [] },
    ),
  );
  assert.is(recorded.settled, 1);
  assert.is((await read(deferredId)).status, 'DELIVERED');
  const events = await q<{ type: string }>(
    `SELECT type FROM email_events WHERE email_id = :id ORDER BY created_at, id`,
    { id: deferredId },
  );
  assert.equal(
    events.map((e) => e.type),
    ['queued', 'spooled'],
  );
});

test('the claim reads each log by its primary key, on a partition without statistics as after ANALYZE', async () => {
  // Logs as the accept path writes them, never analysed (a new month's partition), and due jobs for some.
  await ctx.db.sequelize.query(
    `INSERT INTO email_logs (tenant_id, status, message_id, from_address, to_addresses, subject, html_body, text_body, tags, created_at, updated_at)
     SELECT :tenantId, 'QUEUED', '<plan' || g || '@acme.test>', 'news@acme.test', ARRAY['user' || g || '@example.org'],
            'plan ' || g, '<p>hi</p>', 'hi', '{}', now() - make_interval(secs => g), now() - make_interval(secs => g)
       FROM generate_series(1, 20000) AS g`,
    { replacements: { tenantId: world.tenantId } },
  );
  await ctx.db.sequelize.query(
    `INSERT INTO jobs (queue, payload, run_at)
     SELECT 'send', jsonb_build_object('emailId', id), now() FROM email_logs WHERE subject LIKE 'plan 1%' LIMIT 50`,
  );
  const filled = await q<{ name: string }>('SELECT DISTINCT tableoid::regclass::text AS name FROM email_logs');
  const seqScanOfLogs = new RegExp(`Seq Scan on (${filled.map((p) => p.name).join('|')})\\b`);
  for (const when of ['without statistics', 'after ANALYZE']) {
    if (when === 'after ANALYZE') await ctx.db.sequelize.query('ANALYZE email_logs');
    const plan = await ctx.db.sequelize.transaction(async (transaction) => {
      // EXPLAIN alone does not run the claim's UPDATE; the transaction keeps the session's settings to it.
      const rows = await ctx.db.sequelize.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN ${CLAIM_SENDS.text.replace(/\$1/g, `'plan'`).replace(/\$2/g, '60000').replace(/\$3/g, '20')}`,
        { type: QueryTypes.SELECT, transaction },
      );
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    });
    assert.match(plan, /Index Scan using email_logs_\w+_pkey on email_logs_\w+/, `${when}:\n${plan}`);
    assert.not.match(plan, seqScanOfLogs, `${when}:\n${plan}`);
  }
  await ctx.db.sequelize.query(`DELETE FROM jobs WHERE queue = 'send'`);
  await ctx.db.sequelize.query(`DELETE FROM email_logs WHERE subject LIKE 'plan %'`);
});

test('the outcome statement reads a delivery’s spool row by its primary key, beside 50,000 waiting rows', async () => {
  await ctx.db.sequelize.query(
    `INSERT INTO mta_spool (tenant_id, email_id, domain, recipients, envelope_from, message, expires_at, state)
     SELECT NULL, gen_random_uuid(), 'd' || g || '.test', '[]', 'bounces@acme.test', '\\x00', now() + interval '1 day', 'deferred'
       FROM generate_series(1, 50000) AS g`,
  );
  await ctx.db.sequelize.query('ANALYZE mta_spool');
  const text = RECORD_OUTCOMES.statement.text;
  const parameters = Math.max(...(text.match(/\$\d+/g) ?? []).map((p) => Number(p.slice(1))));
  const plan = await ctx.db.sequelize.transaction(async (transaction) => {
    // As the daemon's declared statements run (db/sql.ts HOT_PATH_SETTINGS): one generic plan.
    await ctx.db.sequelize.query(`SET LOCAL plan_cache_mode = force_generic_plan; SET LOCAL enable_seqscan = off`, {
      transaction,
    });
    await ctx.db.sequelize.query(`PREPARE record_outcomes AS ${text}`, { transaction });
    const rows = await ctx.db.sequelize.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN EXECUTE record_outcomes(${Array.from({ length: parameters }, () => 'NULL').join(', ')})`,
      { type: QueryTypes.SELECT, transaction },
    );
    await ctx.db.sequelize.query('DEALLOCATE record_outcomes', { transaction });
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  });
  // A probe per outcome row, parameterised by its spool_id: not an input of a hash or merge join.
  assert.match(
    plan,
    /Index Scan using mta_spool_pkey on mta_spool s\b[^\n]*\n\s*Index Cond: \(id = o\.spool_id\)/,
    plan,
  );
  assert.not.match(plan, /Seq Scan on mta_spool/, plan);
  await ctx.db.sequelize.query(`DELETE FROM mta_spool WHERE tenant_id IS NULL`);
});

test.run();
