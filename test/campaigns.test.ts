import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { dispatchDueCampaigns } from '../daemon/modules/campaigns/dispatch.ts';
import { expandOneChunk } from '../daemon/modules/campaigns/expand.ts';
import { runJobs, workerContext } from './helpers/send-jobs.ts';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { addMember, createAdmin, createApiKey, createWorld } from './helpers/fixtures.ts';

let ctx: TestContext;
let world: Awaited<ReturnType<typeof createWorld>>;
let templateId: string;

async function rows<T extends object = Record<string, unknown>>(
  sql: string,
  replacements: Record<string, unknown> = {},
): Promise<T[]> {
  return ctx.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });
}

/** A template with published versions in `published` and a draft in `drafts`, written straight to its tables. */
async function createTemplate(tenantId: string, published: string[], drafts: string[] = []): Promise<string> {
  const [template] = await rows<{ id: string }>(
    `INSERT INTO templates (tenant_id, name, slug, editor_mode, default_locale) VALUES (:tenantId, 'Launch', :slug, 'html', 'en') RETURNING id`,
    { tenantId, slug: `launch-${Math.random().toString(36).slice(2, 8)}` },
  );
  let version = 0;
  for (const [locale, isPublished] of [
    ...published.map((l) => [l, true] as const),
    ...drafts.map((l) => [l, false] as const),
  ]) {
    version += 1;
    await ctx.db.sequelize.query(
      `INSERT INTO template_versions (tenant_id, template_id, version, locale, subject, html_body, published_at)
       VALUES (:tenantId, :templateId, :version, :locale, 'Hi', '<p>Hi</p>', ${isPublished ? 'now()' : 'NULL'})`,
      { replacements: { tenantId, templateId: template.id, version, locale } },
    );
  }
  return template.id;
}

test.before(async () => {
  ctx = await createTestContext();
  world = await createWorld(ctx.app);
  templateId = await createTemplate(world.tenantId, ['en', 'es'], ['de']);
  const contacts = [
    { email: 'a@example.com', locale: 'en', optIn: true, tags: ['launch'] },
    { email: 'b@example.com', locale: 'es-MX', optIn: true, tags: ['launch'] },
    { email: 'c@example.com', locale: 'de', optIn: true, tags: ['launch'] },
    { email: 'd@example.com', optIn: true, tags: ['launch'] },
    { email: 'e@example.com', locale: 'fr', optIn: false, tags: ['launch'] },
    { email: 'f@example.com', locale: 'es', optIn: true },
  ];
  const bulk = await ctx.app.inject({
    method: 'POST',
    url: '/contacts/bulk',
    headers: world.asKey,
    payload: { contacts },
  });
  assert.is(bulk.json().created, 6);
});
test.after(async () => {
  await ctx?.close();
});

function create(payload: Record<string, unknown>, headers: Record<string, string> = world.asKey) {
  return ctx.app.inject({ method: 'POST', url: '/campaigns', headers, payload });
}

test('POST /campaigns creates a DRAFT, or SCHEDULED with a future sendAt', async () => {
  const draft = await create({ name: 'Spring launch', templateId, audience: { tag: 'launch' } });
  assert.is(draft.statusCode, 201);
  const body = draft.json();
  assert.is(body.status, 'DRAFT');
  assert.is(body.sendAt, null);
  assert.equal(body.audience, { tag: 'launch' });
  const [row] = await rows<{ tenant_id: string; status: string; template_id: string }>(
    'SELECT tenant_id, status, template_id FROM campaigns WHERE id = :id',
    { id: body.id },
  );
  assert.equal(row, { tenant_id: world.tenantId, status: 'DRAFT', template_id: templateId });

  const sendAt = new Date(Date.now() + 3_600_000).toISOString();
  const scheduled = await create({ name: 'Later', templateId, audience: {}, sendAt, from: 'news@acme.example' });
  assert.is(scheduled.statusCode, 201);
  assert.is(scheduled.json().status, 'SCHEDULED');
  assert.is(scheduled.json().sendAt, sendAt);
});

test('POST /campaigns rejects bad input', async () => {
  const bad = await create({ name: '', templateId: 'nope', audience: { tag: 'Not A Tag', color: 'red' } });
  assert.is(bad.statusCode, 400);
  const fields = bad.json().details.map((d: { field: string }) => d.field);
  assert.ok(fields.includes('name'));
  assert.ok(fields.includes('templateId'));
  assert.ok(fields.some((f: string) => f.startsWith('audience')));
  const past = await create({ name: 'Past', templateId, audience: {}, sendAt: '2020-01-01T00:00:00Z' });
  assert.is(past.statusCode, 400);
  assert.is(past.json().details[0].field, 'sendAt');
  const missingAudience = await create({ name: 'x', templateId });
  assert.is(missingAudience.statusCode, 400);
  const unknownTemplate = await create({ name: 'x', templateId: '00000000-0000-4000-8000-000000000000', audience: {} });
  assert.is(unknownTemplate.statusCode, 422);
  assert.is(unknownTemplate.json().code, 'TEMPLATE_NOT_FOUND');
});

test("a campaign cannot use another tenant's template; other tenants never see it", async () => {
  const other = await createWorld(ctx.app);
  const foreign = await create({ name: 'Steal', templateId, audience: {} }, other.asKey);
  assert.is(foreign.statusCode, 422);
  const mine = (await create({ name: 'Mine', templateId, audience: {} })).json();
  for (const url of [`/campaigns/${mine.id}`, `/campaigns/${mine.id}/locale-coverage`]) {
    const res = await ctx.app.inject({ method: 'GET', url, headers: other.asKey });
    assert.is(res.statusCode, 404, url);
    assert.is(res.json().code, 'NOT_FOUND');
  }
  assert.is(
    (await ctx.app.inject({ method: 'POST', url: `/campaigns/${mine.id}/cancel`, headers: other.asKey })).statusCode,
    404,
  );
  const list = (await ctx.app.inject({ method: 'GET', url: '/campaigns', headers: other.asKey })).json();
  assert.is(list.meta.total, 0);
  const mismatch = await ctx.app.inject({
    method: 'GET',
    url: '/campaigns',
    headers: { ...world.asKey, 'x-tenant-id': other.tenantId },
  });
  assert.is(mismatch.statusCode, 403);
});

test('scopes and roles', async () => {
  const reader = await createApiKey(world.tenantId, { scopes: ['campaigns:read'] });
  const asReader = { authorization: `Bearer ${reader.key}` };
  const denied = await create({ name: 'x', templateId, audience: {} }, asReader);
  assert.is(denied.statusCode, 403);
  assert.is(denied.json().code, 'INSUFFICIENT_SCOPE');
  assert.is((await ctx.app.inject({ method: 'GET', url: '/campaigns', headers: asReader })).statusCode, 200);
  const contactsOnly = await createApiKey(world.tenantId, { scopes: ['contacts:read'] });
  assert.is(
    (
      await ctx.app.inject({
        method: 'GET',
        url: '/campaigns',
        headers: { authorization: `Bearer ${contactsOnly.key}` },
      })
    ).statusCode,
    403,
  );
  const viewer = await createAdmin(ctx.app);
  await addMember(world.tenantId, viewer.id, 'viewer');
  const asViewer = { authorization: `Bearer ${viewer.token}`, 'x-tenant-id': world.tenantId };
  assert.is((await create({ name: 'x', templateId, audience: {} }, asViewer)).statusCode, 403);
  assert.is((await ctx.app.inject({ method: 'GET', url: '/campaigns', headers: asViewer })).statusCode, 200);
  const byOwner = await create({ name: 'Owner made', templateId, audience: {} }, world.asOwner);
  assert.is(byOwner.statusCode, 201);
  const [row] = await rows<{ created_by: string }>('SELECT created_by FROM campaigns WHERE id = :id', {
    id: byOwner.json().id,
  });
  assert.is(row.created_by, world.owner.id);
});

test('GET /campaigns pages and filters by status; GET /campaigns/:id counts the audience', async () => {
  const t = await createWorld(ctx.app);
  const tpl = await createTemplate(t.tenantId, ['en']);
  for (let i = 0; i < 3; i += 1)
    assert.is((await create({ name: `c${i}`, templateId: tpl, audience: {} }, t.asKey)).statusCode, 201);
  await create(
    {
      name: 'sched',
      templateId: tpl,
      audience: {},
      sendAt: new Date(Date.now() + 60_000).toISOString(),
      from: 'news@acme.example',
    },
    t.asKey,
  );
  const page1 = (await ctx.app.inject({ method: 'GET', url: '/campaigns?page=1&limit=3', headers: t.asKey })).json();
  assert.equal(page1.meta, { page: 1, limit: 3, total: 4, totalPages: 2 });
  assert.is(page1.data[0].name, 'sched', 'newest first');
  const page2 = (await ctx.app.inject({ method: 'GET', url: '/campaigns?page=2&limit=3', headers: t.asKey })).json();
  assert.is(page2.data.length, 1);
  const scheduled = (
    await ctx.app.inject({ method: 'GET', url: '/campaigns?status=SCHEDULED', headers: t.asKey })
  ).json();
  assert.equal(
    scheduled.data.map((c: { name: string }) => c.name),
    ['sched'],
  );
  for (const q of ['status=DONE', 'limit=101', 'page=0']) {
    assert.is((await ctx.app.inject({ method: 'GET', url: `/campaigns?${q}`, headers: t.asKey })).statusCode, 400, q);
  }

  const tagged = (await create({ name: 'Tagged', templateId, audience: { tag: 'launch' } })).json();
  const detail = await ctx.app.inject({ method: 'GET', url: `/campaigns/${tagged.id}`, headers: world.asKey });
  assert.is(detail.statusCode, 200);
  assert.is(detail.json().audienceSize, 4, 'opted-in contacts with the tag');
  const spanish = (await create({ name: 'ES', templateId, audience: { locale: 'es' } })).json();
  assert.is(
    (await ctx.app.inject({ method: 'GET', url: `/campaigns/${spanish.id}`, headers: world.asKey })).json()
      .audienceSize,
    1,
  );
  assert.is(
    (await ctx.app.inject({ method: 'GET', url: '/campaigns/not-a-uuid', headers: world.asKey })).statusCode,
    400,
  );
});

test('GET /campaigns/:id/locale-coverage reports each audience locale against the published versions', async () => {
  const campaign = (await create({ name: 'Coverage', templateId, audience: { tag: 'launch' } })).json();
  const res = await ctx.app.inject({
    method: 'GET',
    url: `/campaigns/${campaign.id}/locale-coverage`,
    headers: world.asKey,
  });
  assert.is(res.statusCode, 200);
  assert.equal(res.json(), [
    { locale: 'de', contacts: 1, hasPublishedVersion: false, fallbackLocale: 'en' },
    { locale: 'en', contacts: 2, hasPublishedVersion: true, fallbackLocale: null },
    { locale: 'es-mx', contacts: 1, hasPublishedVersion: false, fallbackLocale: 'es' },
  ]);
});

test('POST /campaigns/:id/cancel cancels a draft once', async () => {
  const campaign = (await create({ name: 'Cancel me', templateId, audience: {} })).json();
  const res = await ctx.app.inject({ method: 'POST', url: `/campaigns/${campaign.id}/cancel`, headers: world.asKey });
  assert.is(res.statusCode, 200);
  assert.is(res.json().status, 'CANCELLED');
  assert.type(res.json().cancelledAt, 'string');
  const [row] = await rows<{ status: string }>('SELECT status FROM campaigns WHERE id = :id', { id: campaign.id });
  assert.is(row.status, 'CANCELLED');
  const again = await ctx.app.inject({ method: 'POST', url: `/campaigns/${campaign.id}/cancel`, headers: world.asKey });
  assert.is(again.statusCode, 409);
  assert.is(again.json().code, 'CAMPAIGN_NOT_CANCELLABLE');
});

function campaignGet(id: string, headers: Record<string, string> = world.asKey) {
  return ctx.app.inject({ method: 'GET', url: `/campaigns/${id}`, headers });
}

function startSend(id: string, from: string, headers: Record<string, string> = world.asKey) {
  return ctx.app.inject({ method: 'POST', url: `/campaigns/${id}/send`, headers, payload: { from } });
}

async function campaignJobs(): Promise<number> {
  return Number((await rows<{ n: string }>(`SELECT count(*) AS n FROM jobs WHERE queue = 'campaign'`))[0].n);
}

test('POST /campaigns/:id/send answers 202 at once; the campaign job hands each opted-in contact to the pipeline with the version for their locale', async () => {
  const campaign = (await create({ name: 'Send me', templateId, audience: { tag: 'launch' } })).json();
  const res = await startSend(campaign.id, 'Acme <news@acme.example>');
  assert.is(res.statusCode, 202, res.body);
  const started = res.json();
  assert.is(started.status, 'SENDING');
  assert.equal([started.total, started.accepted, started.rejected, started.remaining], [4, 0, 0, 4]);
  assert.type(started.startedAt, 'string');
  assert.is(started.from, 'Acme <news@acme.example>');
  assert.is(await campaignJobs(), 1, 'one expansion job, enqueued with the claim');
  assert.equal(
    await rows(`SELECT id FROM email_logs WHERE metadata->>'campaignId' = :id`, { id: campaign.id }),
    [],
    'nothing sent in the request',
  );

  assert.equal(await runJobs(ctx, 'campaign'), ['done']);
  const body = (await campaignGet(campaign.id)).json();
  assert.is(body.status, 'SENT');
  assert.equal([body.total, body.accepted, body.rejected, body.remaining, body.cancelledSends], [4, 4, 0, 0, 0]);
  assert.type(body.sentAt, 'string');
  const logs = await rows<{ to_addresses: string[]; locale: string; status: string; tags: string[] }>(
    `SELECT to_addresses, locale, status, tags FROM email_logs WHERE tenant_id = :tenantId AND metadata->>'campaignId' = :id ORDER BY to_addresses[1]`,
    { tenantId: world.tenantId, id: campaign.id },
  );
  assert.equal(
    logs.map((l) => [l.to_addresses[0], l.locale, l.status]),
    [
      ['a@example.com', 'en', 'QUEUED'],
      ['b@example.com', 'es', 'QUEUED'],
      ['c@example.com', 'en', 'QUEUED'],
      ['d@example.com', 'en', 'QUEUED'],
    ],
  );
  assert.ok(logs.every((l) => l.tags.includes('campaign')));
  // What the worker renders and sends with: the same row a send through acceptSends stores.
  const [log] = await rows<Record<string, unknown>>(
    `SELECT l.id, l.from_address, l.message_id, l.data, l.subject, l.headers, l.cc_addresses, l.attachments, l.html_body, l.api_key_id, l.test_mode,
            (SELECT count(*)::int FROM jobs j WHERE j.queue = 'send' AND j.key = 'email:' || l.id AND j.payload->>'emailId' = l.id::text) AS jobs,
            (SELECT count(*)::int FROM email_events e WHERE e.email_id = l.id AND e.type = 'queued') AS queued
       FROM email_logs l WHERE l.metadata->>'campaignId' = :id AND l.to_addresses[1] = 'b@example.com'`,
    { id: campaign.id },
  );
  const [contact] = await rows<{
    email: string;
    external_id: string | null;
    first_name: string | null;
    last_name: string | null;
    locale: string | null;
    attributes: Record<string, unknown>;
  }>(
    `SELECT email, external_id, first_name, last_name, locale, attributes FROM contacts WHERE tenant_id = :tenantId AND email = 'b@example.com'`,
    { tenantId: world.tenantId },
  );
  assert.equal(log.data, {
    ...contact.attributes,
    contact: {
      email: contact.email,
      externalId: contact.external_id,
      firstName: contact.first_name,
      lastName: contact.last_name,
      locale: contact.locale,
      attributes: contact.attributes,
    },
  });
  assert.equal(
    [
      log.from_address,
      log.message_id,
      log.subject,
      log.headers,
      log.cc_addresses,
      log.attachments,
      log.html_body,
      log.test_mode,
      log.jobs,
      log.queued,
    ],
    ['"Acme" <news@acme.example>', `<${String(log.id)}@acme.example>`, '', {}, [], [], null, false, 1, 1],
  );
  const again = await startSend(campaign.id, 'news@acme.example');
  assert.is(again.statusCode, 409);
  assert.is(again.json().code, 'CAMPAIGN_NOT_SENDABLE');
  await runJobs(ctx, 'send');
});

test('campaign send: suppressed and uncovered recipients are counted as rejected; a bad sender changes nothing', async () => {
  const t = await createWorld(ctx.app);
  const onlySpanish = await createTemplate(t.tenantId, ['es']);
  const contacts = [
    { email: 'uno@example.com', locale: 'es', optIn: true },
    { email: 'dos@example.com', locale: 'es', optIn: true },
    { email: 'three@example.com', locale: 'en', optIn: true },
  ];
  assert.is(
    (await ctx.app.inject({ method: 'POST', url: '/contacts/bulk', headers: t.asKey, payload: { contacts } })).json()
      .created,
    3,
  );
  const suppressed = await ctx.app.inject({
    method: 'POST',
    url: '/suppressions',
    headers: t.asKey,
    payload: { email: 'dos@example.com', reason: 'unsubscribe' },
  });
  assert.is(suppressed.statusCode, 201, suppressed.body);
  const campaign = (await create({ name: 'ES', templateId: onlySpanish, audience: {} }, t.asKey)).json();

  const bad = await startSend(campaign.id, 'not an address', t.asKey);
  assert.is(bad.statusCode, 400);
  const [afterBad] = await rows<{ status: string; last_error: string }>(
    'SELECT status, last_error FROM campaigns WHERE id = :id',
    { id: campaign.id },
  );
  assert.is(afterBad.status, 'DRAFT');
  assert.ok(afterBad.last_error);
  assert.is(await campaignJobs(), 0);

  const res = await startSend(campaign.id, 'hola@acme.example', t.asKey);
  assert.is(res.statusCode, 202, res.body);
  assert.equal(await runJobs(ctx, 'campaign'), ['done']);
  const done = (await campaignGet(campaign.id, t.asKey)).json();
  assert.equal([done.status, done.accepted, done.rejected, done.lastError], ['SENT', 1, 2, null]);
  const sent = await rows<{ to: string }>(
    `SELECT to_addresses[1] AS to FROM email_logs WHERE metadata->>'campaignId' = :id`,
    { id: campaign.id },
  );
  assert.equal(sent, [{ to: 'uno@example.com' }]);

  const other = await createWorld(ctx.app);
  const foreign = await startSend(campaign.id, 'x@acme.example', other.asKey);
  assert.is(foreign.statusCode, 404);
  const reader = await createApiKey(t.tenantId, { scopes: ['campaigns:read'] });
  const denied = await startSend(campaign.id, 'x@acme.example', { authorization: `Bearer ${reader.key}` });
  assert.is(denied.statusCode, 403);
  await runJobs(ctx, 'send');
});

test('a SCHEDULED campaign needs a sender, and the maintenance task starts it once its time has come', async () => {
  const later = new Date(Date.now() + 60_000).toISOString();
  const noSender = await create({ name: 'No sender', templateId, audience: { locale: 'es' }, sendAt: later });
  assert.is(noSender.statusCode, 400);
  assert.is(noSender.json().details[0].field, 'from');
  const badSender = await create({ name: 'Bad sender', templateId, audience: {}, sendAt: later, from: 'nope' });
  assert.is(badSender.statusCode, 400);
  assert.is(badSender.json().details[0].field, 'from');

  const campaign = (
    await create({ name: 'Timed', templateId, audience: { locale: 'es' }, sendAt: later, from: 'timed@acme.example' })
  ).json();
  assert.is(campaign.status, 'SCHEDULED');
  assert.is(campaign.from, 'timed@acme.example');
  const worker = workerContext(ctx);
  await dispatchDueCampaigns(worker);
  assert.is(
    (await rows<{ status: string }>('SELECT status FROM campaigns WHERE id = :id', { id: campaign.id }))[0].status,
    'SCHEDULED',
    'not due yet',
  );

  await ctx.db.sequelize.query(`UPDATE campaigns SET send_at = now() - interval '1 second' WHERE id = :id`, {
    replacements: { id: campaign.id },
  });
  await Promise.all([dispatchDueCampaigns(worker), dispatchDueCampaigns(worker)]);
  assert.is(
    (await rows<{ status: string }>('SELECT status FROM campaigns WHERE id = :id', { id: campaign.id }))[0].status,
    'SENDING',
  );
  assert.is(await campaignJobs(), 1, 'two dispatchers, one expansion job');
  assert.equal(await runJobs(ctx, 'campaign'), ['done']);
  const [row] = await rows<{ status: string; accepted_count: number }>(
    'SELECT status, accepted_count FROM campaigns WHERE id = :id',
    { id: campaign.id },
  );
  assert.equal(row, { status: 'SENT', accepted_count: 1 });
  const logs = await rows<{ to: string; from_address: string }>(
    `SELECT to_addresses[1] AS to, from_address FROM email_logs WHERE metadata->>'campaignId' = :id`,
    { id: campaign.id },
  );
  assert.equal(logs, [{ to: 'f@example.com', from_address: 'timed@acme.example' }]);
  await runJobs(ctx, 'send');
});

/** A tenant with `count` opted-in contacts c000@list.test … and a template published in English. */
async function listWorld(count: number) {
  const t = await createWorld(ctx.app);
  const tpl = await createTemplate(t.tenantId, ['en']);
  const contacts = Array.from({ length: count }, (_, i) => ({
    email: `c${String(i).padStart(3, '0')}@list.test`,
    optIn: true,
  }));
  const bulk = await ctx.app.inject({ method: 'POST', url: '/contacts/bulk', headers: t.asKey, payload: { contacts } });
  assert.is(bulk.json().created, count, bulk.body);
  return { ...t, templateId: tpl };
}

test('cancel while SENDING stops the expansion and takes back the queued sends no worker has picked up, with their quota', async () => {
  const t = await listWorld(5);
  const campaign = (await create({ name: 'Stop me', templateId: t.templateId, audience: {} }, t.asKey)).json();
  assert.is((await startSend(campaign.id, 'news@acme.example', t.asKey)).statusCode, 202);
  const deps = { db: ctx.db, config: ctx.config, secrets: ctx.deps.secrets, ...ctx.workerResources };
  assert.is(await expandOneChunk(deps, t.tenantId, campaign.id, 3), 'more');
  const midway = (await campaignGet(campaign.id, t.asKey)).json();
  assert.equal([midway.status, midway.total, midway.accepted, midway.remaining], ['SENDING', 5, 3, 2]);

  const logs = await rows<{ id: string }>(`SELECT id FROM email_logs WHERE metadata->>'campaignId' = :id ORDER BY id`, {
    id: campaign.id,
  });
  assert.is(logs.length, 3);
  // A worker already holds the first one: it is being delivered and cannot be taken back.
  await ctx.db.sequelize.query(
    `UPDATE jobs SET locked_by = 'w', locked_until = now() + interval '1 minute' WHERE queue = 'send' AND key = :key`,
    { replacements: { key: `email:${logs[0].id}` } },
  );

  const used = async () =>
    Number(
      (
        await rows<{ used: string }>('SELECT sum(used) AS used FROM quota_usage WHERE tenant_id = :t', {
          t: t.tenantId,
        })
      )[0].used,
    );
  assert.is(await used(), 3, 'each queued send is counted');

  const res = await ctx.app.inject({ method: 'POST', url: `/campaigns/${campaign.id}/cancel`, headers: t.asKey });
  assert.is(res.statusCode, 200, res.body);
  const body = res.json();
  assert.equal([body.status, body.accepted, body.cancelledSends, body.remaining], ['CANCELLED', 3, 2, 0]);
  assert.is(await used(), 1, 'the two sends taken back give their quota back; the one being delivered keeps it');
  assert.type(body.cancelledAt, 'string');
  const after = await rows<{ id: string; status: string; error: string | null }>(
    `SELECT id, status, error FROM email_logs WHERE metadata->>'campaignId' = :id ORDER BY id`,
    { id: campaign.id },
  );
  assert.equal(
    after.map((l) => l.status),
    ['QUEUED', 'CANCELLED', 'CANCELLED'],
  );
  assert.match(after[1].error ?? '', /cancelled/);
  const sendJobs = await rows<{ key: string }>(`SELECT key FROM jobs WHERE queue = 'send' AND key IN (:keys)`, {
    keys: logs.map((l) => `email:${l.id}`),
  });
  assert.equal(sendJobs, [{ key: `email:${logs[0].id}` }], 'only the leased send is left');
  assert.is(await campaignJobs(), 0, 'the expansion job is removed');
  assert.is(await expandOneChunk(deps, t.tenantId, campaign.id, 3), 'stopped', 'a running job stops at its next chunk');
  assert.is(
    (await rows(`SELECT id FROM email_logs WHERE metadata->>'campaignId' = :id`, { id: campaign.id })).length,
    3,
  );
  const again = await ctx.app.inject({ method: 'POST', url: `/campaigns/${campaign.id}/cancel`, headers: t.asKey });
  assert.is(again.statusCode, 409);
  await ctx.db.sequelize.query(`DELETE FROM jobs WHERE queue = 'send'`);
});

test('campaign recipients get the exact quota: the send stops at the 110 % hard stop, suppressed contacts are refused', async () => {
  // Free plan: 100 a month, hard stop at 110. 120 contacts, one of them suppressed.
  const t = await listWorld(120);
  await ctx.app.inject({
    method: 'POST',
    url: '/suppressions',
    headers: t.asKey,
    payload: { email: 'c007@list.test', reason: 'unsubscribe' },
  });
  const campaign = (await create({ name: 'Too many', templateId: t.templateId, audience: {} }, t.asKey)).json();
  assert.is((await startSend(campaign.id, 'news@acme.example', t.asKey)).statusCode, 202);
  assert.equal(
    await runJobs(ctx, 'campaign'),
    ['retry'],
    'part-way: retried later (next cycle, upgrade) rather than given up',
  );
  const body = (await campaignGet(campaign.id, t.asKey)).json();
  assert.is(body.status, 'SENDING');
  assert.is(body.accepted, 110, 'exactly up to the hard stop');
  assert.match(body.lastError, /quota/);
  assert.is(body.remaining, 120 - 110 - body.rejected);
  const [usage] = await rows<{ used: string }>('SELECT sum(used) AS used FROM quota_usage WHERE tenant_id = :t', {
    t: t.tenantId,
  });
  assert.is(Number(usage.used), 110);
  const logs = await rows<{ to: string }>(
    `SELECT to_addresses[1] AS to FROM email_logs WHERE metadata->>'campaignId' = :id`,
    { id: campaign.id },
  );
  assert.is(logs.length, 110);
  assert.is(new Set(logs.map((l) => l.to)).size, 110, 'one log per contact');
  assert.not.ok(
    logs.some((l) => l.to === 'c007@list.test'),
    'the suppressed contact got nothing',
  );
  await ctx.db.sequelize.query(`DELETE FROM jobs WHERE queue = 'send'`);
});

test('a campaign refused before anything was accepted returns to DRAFT with the reason', async () => {
  const t = await listWorld(2);
  await ctx.db.sequelize.query(
    `UPDATE tenants SET sending_paused_at = now(), sending_paused_reason = 'bounce rate' WHERE id = :id`,
    { replacements: { id: t.tenantId } },
  );
  const campaign = (await create({ name: 'Paused', templateId: t.templateId, audience: {} }, t.asKey)).json();
  assert.is((await startSend(campaign.id, 'news@acme.example', t.asKey)).statusCode, 202);
  assert.equal(await runJobs(ctx, 'campaign'), ['done']);
  const body = (await campaignGet(campaign.id, t.asKey)).json();
  assert.equal([body.status, body.accepted], ['DRAFT', 0]);
  assert.match(body.lastError, /paused/i);
  assert.is((await startSend(campaign.id, 'news@acme.example', t.asKey)).statusCode, 202, 'it can be sent again');
  await ctx.db.sequelize.query(`DELETE FROM jobs WHERE queue = 'campaign'`);
});

test.run();
