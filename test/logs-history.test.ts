// History at scale: recipient / message-id / tag / status searches, bounded totals, the keyset
// cursor and the deep-page bound of GET /emails/logs; retention settings (platform default,
// tenant override) and their enforcement on the monthly partitions; tenant deletion.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createAdmin, createWorld } from './helpers/fixtures.ts';
import { enforceRetention } from '../daemon/modules/retention/enforce.ts';
import { addMonths, createPartitionSql, listPartitions, monthOf, partitionName } from '../daemon/db/partitions.ts';
import { countLogs, keyFirstPageSql } from '../daemon/modules/emails/sql/log-search.ts';
import { pagedTotal } from '../daemon/modules/emails/logs.ts';
import { EXACT_LOG_TOTAL } from '../shared/schemas/emails.ts';
import { logTagRowsSql } from '../daemon/modules/emails/sql/insert-logs.ts';

let ctx: TestContext;
test.before(async () => {
  ctx = await createTestContext();
});
test.after(async () => {
  await ctx?.close();
});

const q = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
  ctx.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });

/** `count` logs of a tenant, one second apart going back from `newest`, straight into the table (tags beside them). */
async function seedLogs(
  tenantId: string,
  count: number,
  options: { newest?: string; status?: string; tag?: string; to?: string } = {},
) {
  await ctx.db.sequelize.query(
    `WITH logs AS (INSERT INTO email_logs (tenant_id, status, message_id, from_address, to_addresses, subject, html_body, text_body, tags, created_at, updated_at)
     SELECT :tenantId, :status, '<seed-' || g || '-' || gen_random_uuid() || '@acme.test>', 'app@acme.test',
            ARRAY[coalesce(CAST(:to AS text), 'user' || g || '@example.org')], 'seed ' || g, '<p>hi</p>', 'hi',
            CASE WHEN CAST(:tag AS text) IS NULL THEN '{}'::text[] ELSE ARRAY[CAST(:tag AS text)] END,
            CAST(:newest AS timestamptz) - make_interval(secs => g), CAST(:newest AS timestamptz) - make_interval(secs => g)
       FROM generate_series(1, :count) AS g
     RETURNING tenant_id, tags, created_at, id)
     INSERT INTO email_log_tags (tenant_id, tag, created_at, id) ${logTagRowsSql('logs')}`,
    {
      replacements: {
        tenantId,
        count,
        newest: options.newest ?? new Date().toISOString(),
        status: options.status ?? 'SENT',
        tag: options.tag ?? null,
        to: options.to ?? null,
      },
    },
  );
}

type Page = {
  data: { id: string; to: string[]; messageId: string; status: string; tags: string[]; createdAt: string }[];
  meta: { total: number; totalPages: number; totalIsEstimate: boolean; nextCursor: string | null; page: number };
};

test('recipient search finds "Name <Address>" entries case-insensitively, and message-id search finds one log', async () => {
  const world = await createWorld(ctx.app);
  const sent = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: world.asKey,
    payload: {
      from: 'app@acme.test',
      to: ['Ada Lovelace <Ada@Example.ORG>', 'bob@example.org'],
      subject: 'Hi',
      textBody: 'hello',
    },
  });
  assert.is(sent.statusCode, 202, sent.body);
  await seedLogs(world.tenantId, 50);

  for (const needle of ['ada@example.org', 'ADA@example.org', 'Someone <ada@EXAMPLE.org>']) {
    const found = await ctx.app.inject({
      method: 'GET',
      url: `/emails/logs?to=${encodeURIComponent(needle)}`,
      headers: world.asKey,
    });
    const page = found.json() as Page;
    assert.equal(
      page.data.map((log) => log.id),
      [sent.json().id],
      needle,
    );
    assert.equal(
      page.data[0].to,
      ['"Ada Lovelace" <Ada@Example.ORG>', 'bob@example.org'],
      'stored as sent, display name quoted',
    );
    assert.equal([page.meta.total, page.meta.totalIsEstimate, page.meta.nextCursor], [1, false, null]);
  }
  const none = (
    await ctx.app.inject({ method: 'GET', url: '/emails/logs?to=ada@example', headers: world.asKey })
  ).json() as Page;
  assert.is(none.data.length, 0, 'an exact address, not a substring');

  const messageId = sent.json().messageId as string;
  for (const form of [messageId, messageId.slice(1, -1)]) {
    const byId = (
      await ctx.app.inject({
        method: 'GET',
        url: `/emails/logs?messageId=${encodeURIComponent(form)}`,
        headers: world.asKey,
      })
    ).json() as Page;
    assert.equal(
      byId.data.map((log) => log.messageId),
      [messageId],
      form,
    );
    assert.equal([byId.meta.total, byId.meta.totalIsEstimate, byId.meta.nextCursor], [1, false, null], form);
  }
  // The statements a search runs, seen through Sequelize's logging: a message-id page that ends the
  // results is its own count (logs.ts pageThenCount), one that does not is counted (EXPLAIN first).
  const idPage = async (query: string) => {
    const statements: string[] = [];
    const sequelize = ctx.db.sequelize as unknown as { options: { logging: unknown } };
    const previous = sequelize.options.logging;
    sequelize.options.logging = (sql: string) => statements.push(sql);
    try {
      const page = (
        await ctx.app.inject({ method: 'GET', url: `/emails/logs?${query}`, headers: world.asKey })
      ).json() as Page;
      return { page, explained: statements.some((sql) => /\bEXPLAIN\b/.test(sql)) };
    } finally {
      sequelize.options.logging = previous;
    }
  };
  const found = await idPage(`messageId=${encodeURIComponent(messageId)}`);
  assert.equal([found.page.meta.total, found.page.meta.totalIsEstimate, found.explained], [1, false, false]);
  const unknownId = await idPage('messageId=%3Cnone%40example.org%3E');
  assert.equal([unknownId.page.data.length, unknownId.page.meta.total, unknownId.explained], [0, 0, false]);
  // Past the matches the page is empty and says nothing of them: the count answers.
  const pastMatches = await idPage(`messageId=${encodeURIComponent(messageId)}&page=2&limit=20`);
  assert.equal(
    [
      pastMatches.page.data.length,
      pastMatches.page.meta.total,
      pastMatches.page.meta.totalIsEstimate,
      pastMatches.explained,
    ],
    [0, 1, false, true],
  );
  const byRecipient = await idPage('to=bob@example.org');
  assert.ok(byRecipient.explained, 'the other searches still count beside their page');
  // The recipient search reads the tenant-scoped key index (test/logs-search-plans.test.ts tests every search's plan).
  const search = keyFirstPageSql(
    { tenantId: world.tenantId, to: 'Someone <ADA@example.org>' },
    { limit: 20, offset: 0, after: null },
  )!;
  const plan = await ctx.db.sequelize.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${search.sql}`, {
    type: QueryTypes.SELECT,
    replacements: search.replacements,
  });
  const text = plan.map((row) => row['QUERY PLAN']).join('\n');
  assert.match(
    text,
    /Index Cond: \(email_log_recipient_keys\(tenant_id, to_addresses\) @> '\{[0-9a-f-]+:ada@example\.org\}'/,
    text,
  );
});

test('status and tag within a time range; the cursor walks every row once; deep pages answer 400', async () => {
  const world = await createWorld(ctx.app);
  const base = new Date(Date.now() - 3600_000).toISOString();
  await seedLogs(world.tenantId, 30, { newest: base, status: 'FAILED', tag: 'invoice' });
  await seedLogs(world.tenantId, 45, { newest: base, status: 'SENT' });
  const since = new Date(Date.parse(base) - 20_500).toISOString();
  const failed = (
    await ctx.app.inject({
      method: 'GET',
      url: `/emails/logs?status=FAILED&since=${since}&until=${base}&limit=100`,
      headers: world.asKey,
    })
  ).json() as Page;
  assert.is(failed.data.length, 20);
  assert.ok(failed.data.every((log) => log.status === 'FAILED' && Date.parse(log.createdAt) >= Date.parse(since)));
  const tagged = (
    await ctx.app.inject({ method: 'GET', url: `/emails/logs?tag=invoice&limit=100`, headers: world.asKey })
  ).json() as Page;
  assert.equal([tagged.data.length, tagged.meta.total], [30, 30]);
  assert.ok(tagged.data.every((log) => log.tags.includes('invoice')));

  const seen: string[] = [];
  let page = (
    await ctx.app.inject({ method: 'GET', url: '/emails/logs?limit=7', headers: world.asKey })
  ).json() as Page;
  seen.push(...page.data.map((log) => log.id));
  const page2 = (
    await ctx.app.inject({ method: 'GET', url: '/emails/logs?limit=7&page=2', headers: world.asKey })
  ).json() as Page;
  while (page.meta.nextCursor) {
    const next = await ctx.app.inject({
      method: 'GET',
      url: `/emails/logs?limit=7&cursor=${page.meta.nextCursor}`,
      headers: world.asKey,
    });
    assert.is(next.statusCode, 200);
    page = next.json() as Page;
    if (seen.length === 7)
      assert.equal(
        page.data.map((log) => log.id),
        page2.data.map((log) => log.id),
        'the cursor continues where page 1 ended',
      );
    seen.push(...page.data.map((log) => log.id));
  }
  assert.is(seen.length, 75);
  assert.is(new Set(seen).size, 75, 'no row twice');
  const all = await q<{ id: string }>(
    `SELECT id FROM email_logs WHERE tenant_id = :t ORDER BY created_at DESC, id DESC`,
    { t: world.tenantId },
  );
  assert.equal(
    seen,
    all.map((row) => row.id),
    'newest first, as the table orders them',
  );

  const deep = await ctx.app.inject({ method: 'GET', url: '/emails/logs?page=101&limit=100', headers: world.asKey });
  assert.is(deep.statusCode, 400);
  assert.match(deep.json().message, /cursor/);
  const bad = await ctx.app.inject({ method: 'GET', url: '/emails/logs?cursor=not-a-cursor', headers: world.asKey });
  assert.equal([bad.statusCode, bad.json().details?.[0]?.field], [400, 'querystring.cursor']);
});

test('past EXACT_LOG_TOTAL (1,000) matches the total is an estimate, flagged; below it is exact', async () => {
  const world = await createWorld(ctx.app);
  await seedLogs(world.tenantId, EXACT_LOG_TOTAL + 400);
  await ctx.db.sequelize.query('ANALYZE email_logs');
  const page = (
    await ctx.app.inject({ method: 'GET', url: '/emails/logs?limit=20', headers: world.asKey })
  ).json() as Page;
  assert.is(page.data.length, 20);
  assert.is(page.meta.totalIsEstimate, true);
  assert.ok(page.meta.total > EXACT_LOG_TOTAL, `estimate ${page.meta.total}`);
  assert.is(page.meta.totalPages, Math.ceil(page.meta.total / 20));
  const narrow = (
    await ctx.app.inject({ method: 'GET', url: '/emails/logs?to=user7@example.org', headers: world.asKey })
  ).json() as Page;
  assert.equal([narrow.meta.total, narrow.meta.totalIsEstimate], [1, false]);
});

test('a count the planner prices above the bound is not run: the estimate answers, flagged; a page that ends the results is exact', async () => {
  const world = await createWorld(ctx.app);
  await seedLogs(world.tenantId, 300);
  await ctx.db.sequelize.query('ANALYZE email_logs');
  const filter = { tenantId: world.tenantId };
  assert.equal(
    await countLogs(ctx.db.sequelize, filter, EXACT_LOG_TOTAL),
    { total: 300, estimate: false },
    'cheap: counted',
  );
  const priced = await countLogs(ctx.db.sequelize, filter, EXACT_LOG_TOTAL, 0);
  assert.is(priced.estimate, true, 'above the cost bound: not counted');
  assert.ok(priced.total > 0, `the planner's estimate (${priced.total})`);
  assert.equal(
    pagedTotal(5_000, 40, { rows: new Array(7), hasMore: false }),
    { total: 47, estimate: false },
    'the last page knows the total',
  );
  assert.equal(
    pagedTotal(5, 40, { rows: new Array(20), hasMore: true }),
    { total: 61, estimate: true },
    'never below what was seen',
  );
  assert.equal(
    pagedTotal(90, 400, { rows: [], hasMore: false }),
    { total: 90, estimate: true },
    'a page past the end knows nothing more',
  );
  assert.equal(
    pagedTotal(90, null, { rows: new Array(3), hasMore: false }),
    { total: 90, estimate: true },
    'a cursor page does not know its offset',
  );
});

test('retention: platform default and tenant override in the API; enforcement drops partitions, deletes and strips in batches', async () => {
  const world = await createWorld(ctx.app);
  const other = await createWorld(ctx.app);
  const platformAdmin = await createAdmin(ctx.app, { platformAdmin: true });
  const asPlatform = { authorization: `Bearer ${platformAdmin.token}` };

  const settings = await ctx.app.inject({
    method: 'PATCH',
    url: '/platform/settings',
    headers: asPlatform,
    payload: { logRetentionDays: 90, bodyRetentionDays: 20 },
  });
  assert.is(settings.statusCode, 200, settings.body);
  assert.equal(
    [settings.json().logRetentionDays, settings.json().bodyRetentionDays, settings.json().rawMessageRetentionDays],
    [90, 20, 30],
  );

  const tooLong = await ctx.app.inject({
    method: 'PATCH',
    url: `/tenants/${world.tenantId}/retention`,
    headers: world.asOwner,
    payload: { logsDays: 120 },
  });
  assert.equal([tooLong.statusCode, tooLong.json().details?.[0]?.field], [400, 'body.logsDays']);
  const set = await ctx.app.inject({
    method: 'PATCH',
    url: `/tenants/${world.tenantId}/retention`,
    headers: world.asOwner,
    payload: { logsDays: 10, bodiesDays: 2 },
  });
  assert.is(set.statusCode, 200, set.body);
  assert.equal(set.json().effective, {
    logsDays: 10,
    bodiesDays: 2,
    rawMessagesDays: 30,
    eventsDays: 60,
    webhookDeliveriesDays: 30,
  });
  assert.equal(set.json().overrides.logsDays, 10);
  const shown = (
    await ctx.app.inject({ method: 'GET', url: `/tenants/${world.tenantId}/retention`, headers: world.asOwner })
  ).json();
  assert.equal(shown, set.json());

  const day = 24 * 3600_000;
  const at = (days: number) => new Date(Date.now() - days * day).toISOString();
  // Four months back: a partition of its own that the 90-day horizon passes whole.
  const old = addMonths(monthOf(new Date()), -4);
  for (const table of ['email_logs', 'email_log_tags']) {
    await ctx.db.sequelize.query(createPartitionSql(table, old));
  }
  await seedLogs(other.tenantId, 3, {
    newest: new Date(Date.UTC(old.year, old.month - 1, 10)).toISOString(),
    tag: 'ancient',
  });
  await seedLogs(world.tenantId, 4, { newest: at(15), tag: 'expired' }); // past the tenant's 10 days
  await seedLogs(world.tenantId, 5, { newest: at(5), tag: 'kept' }); // kept; bodies past the tenant's 2 days
  await seedLogs(other.tenantId, 6, { newest: at(15) }); // kept (platform 90 days); bodies kept (20 days)
  await seedLogs(other.tenantId, 2, { newest: at(25) }); // kept; bodies past the platform's 20 days
  const [log] = await q<{ id: string }>(
    `SELECT id FROM email_logs WHERE tenant_id = :t AND created_at BETWEEN now() - interval '6 days' AND now() - interval '4 days' LIMIT 1`,
    { t: world.tenantId },
  );
  await ctx.db.sequelize.query(
    `UPDATE email_logs SET attachments = '[{"filename":"a.txt","content":"aGk=","contentType":"text/plain","size":2}]' WHERE id = :id`,
    { replacements: { id: log.id } },
  );
  await ctx.db.sequelize.query(
    `INSERT INTO captured_messages (tenant_id, message_id, raw, created_at) VALUES (:t, '<r1@x>', 'raw old', now() - interval '40 days'), (:t, '<r2@x>', 'raw new', now())`,
    { replacements: { t: world.tenantId } },
  );

  // Reports kept without effect age with the platform's events horizon (60 days); outcomes per recipient
  // with the logs' (90 days here, 10 for the tenant with the override).
  await ctx.db.sequelize.query(
    `INSERT INTO inbound_reports (disposition, kind, source, reason, received_at) VALUES
       ('unmatched', 'bounce', 'dsn', 'old', now() - interval '61 days'),
       ('unverified', 'complaint', 'arf', 'recent', now() - interval '59 days')`,
  );
  await ctx.db.sequelize.query(
    `INSERT INTO recipient_outcomes (tenant_id, email_id, recipient, kind, created_at) VALUES
       (:w, gen_random_uuid(), 'past-override@x.test', 'hard_bounce', now() - interval '11 days'),
       (:w, gen_random_uuid(), 'within@x.test', 'complaint', now() - interval '9 days'),
       (:o, gen_random_uuid(), 'kept@x.test', 'hard_bounce', now() - interval '11 days'),
       (:o, gen_random_uuid(), 'past-platform@x.test', 'soft_bounce', now() - interval '91 days')`,
    { replacements: { w: world.tenantId, o: other.tenantId } },
  );
  // Warm-up counts per day age with the platform's logs horizon (90 days here).
  const [address] = await q<{ id: string }>(
    `WITH pool AS (INSERT INTO ip_pools (name) VALUES ('retention-' || gen_random_uuid()) RETURNING id)
     INSERT INTO ip_pool_addresses (pool_id, ip, ehlo_name) SELECT id, '192.0.2.' || (floor(random() * 200) + 1)::int, 'mx.example.test' FROM pool RETURNING id`,
    {},
  );
  await ctx.db.sequelize.query(
    `INSERT INTO ip_warmup_counts (address_id, provider, day, sent) VALUES
       (:a, 'google', current_date - 91, 50), (:a, 'google', current_date - 89, 100), (:a, 'default', current_date, 7)`,
    { replacements: { a: address.id } },
  );

  const report = await enforceRetention(ctx.db.sequelize);
  assert.ok(report.partitionsDropped.includes(partitionName('email_logs', old)), JSON.stringify(report));
  assert.ok(report.partitionsDropped.includes(partitionName('email_log_tags', old)), 'the tags go with their month');
  // A log deleted by the tenant's horizon takes its tags' entries with it; a kept log keeps them.
  assert.equal(
    await q<{ tag: string; n: number }>(
      `SELECT tag, count(*)::int AS n FROM email_log_tags WHERE tenant_id IN (:w, :o) GROUP BY tag ORDER BY tag`,
      { w: world.tenantId, o: other.tenantId },
    ),
    [{ tag: 'kept', n: 5 }],
  );
  const kept = await ctx.app.inject({ method: 'GET', url: '/emails/logs?tag=kept', headers: world.asKey });
  assert.equal([kept.json().data.length, kept.json().meta.total], [5, 5], kept.body);
  assert.equal(
    [report.rowsDeleted.inbound_reports, report.rowsDeleted.recipient_outcomes, report.rowsDeleted.ip_warmup_counts],
    [1, 2, 1],
    JSON.stringify(report.rowsDeleted),
  );
  assert.equal(
    await q<{ sent: number }>(`SELECT sent FROM ip_warmup_counts WHERE address_id = :a ORDER BY day`, {
      a: address.id,
    }),
    [{ sent: 100 }, { sent: 7 }],
  );
  assert.equal(
    (await q<{ reason: string }>(`SELECT reason FROM inbound_reports`, {})).map((r) => r.reason),
    ['recent'],
  );
  assert.equal(
    (await q<{ recipient: string }>(`SELECT recipient FROM recipient_outcomes ORDER BY recipient`, {})).map(
      (r) => r.recipient,
    ),
    ['kept@x.test', 'within@x.test'],
  );
  assert.not.ok((await listPartitions(ctx.db.sequelize, 'email_logs')).includes(partitionName('email_logs', old)));
  const ahead = partitionName('email_logs', addMonths(monthOf(new Date()), 2));
  assert.ok((await listPartitions(ctx.db.sequelize, 'email_logs')).includes(ahead), 'partitions exist ahead');

  const left = async (t: string) =>
    (
      await q<{ n: number; bodies: number }>(
        `SELECT count(*)::int AS n, count(html_body)::int AS bodies FROM email_logs WHERE tenant_id = :t`,
        { t },
      )
    )[0];
  assert.equal(
    await left(world.tenantId),
    { n: 5, bodies: 0 },
    'override: 15-day-old logs deleted, bodies past 2 days removed',
  );
  assert.equal(
    await left(other.tenantId),
    { n: 8, bodies: 6 },
    'platform: old partition dropped, bodies past 20 days removed',
  );
  const detail = (await ctx.app.inject({ method: 'GET', url: `/emails/logs/${log.id}`, headers: world.asKey })).json();
  assert.equal(
    [detail.bodyHtml, detail.bodyText, detail.attachments],
    [null, null, [{ filename: 'a.txt', contentType: 'text/plain', size: 2 }]],
  );
  assert.ok(detail.bodiesRemovedAt);
  const [attachment] = await q<{ attachments: unknown[] }>(`SELECT attachments FROM email_logs WHERE id = :id`, {
    id: log.id,
  });
  assert.equal(
    attachment.attachments,
    [{ filename: 'a.txt', contentType: 'text/plain', size: 2 }],
    'attachment contents are gone',
  );
  const resend = await ctx.app.inject({ method: 'POST', url: `/emails/logs/${log.id}/resend`, headers: world.asKey });
  assert.equal([resend.statusCode, resend.json().code], [409, 'BODIES_EXPIRED']);
  assert.equal(
    (await q<{ raw: string }>(`SELECT raw FROM captured_messages WHERE tenant_id = :t`, { t: world.tenantId })).map(
      (r) => r.raw,
    ),
    ['raw new'],
  );

  const again = await enforceRetention(ctx.db.sequelize);
  assert.equal(
    [again.partitionsCreated, again.partitionsDropped, again.bodiesRemoved],
    [[], [], 0],
    'a second run finds nothing to do',
  );
});

test('deleting a tenant removes its logs, timeline, captured messages, events and tag entries from every partition', async () => {
  const world = await createWorld(ctx.app);
  await seedLogs(world.tenantId, 5, { tag: 'gone' });
  await ctx.db.sequelize.query(
    `INSERT INTO email_events (tenant_id, email_id, type) SELECT tenant_id, id, 'queued' FROM email_logs WHERE tenant_id = :t;
     INSERT INTO events (tenant_id, type, data) VALUES (:t, 'email.sent', '{}');
     INSERT INTO captured_messages (tenant_id, message_id, raw) VALUES (:t, '<x@y>', 'raw')`,
    { replacements: { t: world.tenantId } },
  );
  const gone = await ctx.app.inject({ method: 'DELETE', url: `/tenants/${world.tenantId}`, headers: world.asOwner });
  assert.is(gone.statusCode, 200, gone.body);
  const [counts] = await q<Record<string, number>>(
    `SELECT (SELECT count(*)::int FROM email_logs WHERE tenant_id = :t) AS logs, (SELECT count(*)::int FROM email_events WHERE tenant_id = :t) AS timeline,
            (SELECT count(*)::int FROM events WHERE tenant_id = :t) AS events, (SELECT count(*)::int FROM captured_messages WHERE tenant_id = :t) AS captured,
            (SELECT count(*)::int FROM email_log_tags WHERE tenant_id = :t) AS tags`,
    { t: world.tenantId },
  );
  assert.equal(counts, { logs: 0, timeline: 0, events: 0, captured: 0, tags: 0 });
});

test.run();
