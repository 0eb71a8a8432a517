// acceptSends without HTTP: what it answers (accepted, rejected, suppressed, replayed, sync, quota)
// for the callers that are not routes (scheduled sends, campaigns, SMTP submission), with and
// without the API's cache of tenant state and group commit.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { addVerifiedDomain, createWorld } from './helpers/fixtures.ts';
import { acceptSends, type SendDeps } from '../daemon/modules/emails/service.ts';
import addressparser from 'nodemailer/lib/addressparser/index.js';
import { mailboxParts } from '../daemon/mail/mailboxes.ts';
import { normalizeSend } from '../daemon/modules/emails/validate.ts';
import { createAcceptGroups } from '../daemon/modules/emails/accept-groups.ts';
import { createTenantStateCache } from '../daemon/modules/tenants/state-cache.ts';
import type { TenantContext } from '../daemon/context.ts';
import { ApiError } from '../daemon/errors.ts';

let ctx: TestContext;

test.before(async () => {
  ctx = await createTestContext();
});

test.after(async () => {
  await ctx?.close();
});

const plainDeps = (): SendDeps => ({
  db: ctx.db,
  config: ctx.config,
  secrets: ctx.deps.secrets,
  ...ctx.workerResources,
});

async function tenant(limit: number): Promise<TenantContext> {
  const world = await createWorld(ctx.app);
  await ctx.db.sequelize.query('UPDATE tenants SET monthly_limit = :limit WHERE id = :id', {
    replacements: { limit, id: world.tenantId },
  });
  await ctx.db.sequelize.query(
    `INSERT INTO suppressions (tenant_id, email, reason) VALUES (:id, 'gone@example.test', 'bounce')`,
    { replacements: { id: world.tenantId } },
  );
  return {
    tenantId: world.tenantId,
    adminId: null,
    apiKeyId: world.key.id,
    role: null,
    isPlatformAdmin: false,
    testMode: false,
  };
}

const send = (to: string, cc: string[] = []) =>
  normalizeSend({ from: 'app@acme.test', to, cc, subject: 'Hi', textBody: 'Hello' });

for (const [name, deps] of [
  ['worker threads (no cache)', async () => plainDeps()],
  [
    'API (cache and group commit)',
    async () => {
      const tenantState = await createTenantStateCache({ sql: ctx.db.sql, listenUrl: null });
      return { ...plainDeps(), tenantState, acceptGroups: createAcceptGroups(ctx.db.sql) };
    },
  ],
] as const) {
  test(`${name}: a single send answers what it accepted and which recipients it dropped`, async () => {
    const sendDeps = await deps();
    const as = await tenant(10);
    const answer = await acceptSends(sendDeps, as, {
      sends: [send('Reader <reader@example.test>', ['gone@example.test'])],
      shape: 'single',
    });
    assert.is(answer.accepted.length, 1);
    assert.equal(answer.accepted[0].to, ['"Reader" <reader@example.test>']);
    assert.equal(answer.suppressed, ['gone@example.test']);
    assert.equal(answer.rejected, []);
    assert.is(answer.sync, null);
    assert.is(answer.replayed, false);
    assert.equal([answer.quota.limit, answer.quota.used], [10, 1]);
    assert.equal(answer.body, {
      id: answer.accepted[0].id,
      status: 'QUEUED',
      messageId: answer.accepted[0].messageId,
      suppressed: ['gone@example.test'],
    });
    const [row] = await ctx.db.sequelize.query<{ cc: string[] }>(
      'SELECT cc_addresses AS cc FROM email_logs WHERE id = :id',
      { replacements: { id: answer.accepted[0].id }, type: QueryTypes.SELECT },
    );
    assert.equal(row.cc, []);
  });

  test(`${name}: a batch lists suppressed entries as rejected; a key replays; refusals are ApiErrors`, async () => {
    const sendDeps = await deps();
    const as = await tenant(2);
    const batch = [send('one@example.test'), send('gone@example.test'), send('two@example.test')];
    const first = await acceptSends(sendDeps, as, {
      sends: batch,
      shape: 'batch',
      idempotencyKey: 'batch-1',
      rejected: [{ to: 'bad', reason: 'invalid address' }],
    });
    assert.equal(
      first.accepted.map((a) => a.to),
      [['one@example.test'], ['two@example.test']],
    );
    assert.equal(first.rejected, [
      { to: 'bad', reason: 'invalid address' },
      { to: 'gone@example.test', reason: 'suppressed' },
    ]);
    const again = await acceptSends(sendDeps, as, {
      sends: batch,
      shape: 'batch',
      idempotencyKey: 'batch-1',
      rejected: [{ to: 'bad', reason: 'invalid address' }],
    });
    assert.is(again.replayed, true);
    assert.equal(again.accepted, []);
    assert.equal(again.body, first.body);
    // 2 of a limit of 2 used: the cap (110 %) is 2, a third is refused with the quota's headers.
    try {
      await acceptSends(sendDeps, as, { sends: [send('three@example.test')], shape: 'single' });
      assert.unreachable('the quota should refuse');
    } catch (error) {
      assert.instance(error, ApiError);
      assert.is((error as ApiError).code, 'QUOTA_EXCEEDED');
    }
  });
}

test('a batch keeps each body as sent: multibyte, long and absent bodies, each on its own log', async () => {
  const as = await tenant(10);
  const bodies = [
    { htmlBody: '<p>Grüße — 日本語 🎉</p>', textBody: 'Grüße — 日本語 🎉' },
    { htmlBody: '<p>only html</p>' },
    { textBody: 'only text, ünïcödé' },
    { htmlBody: 'x'.repeat(70_000) + 'é', textBody: '\r\nline\nend ' },
  ];
  const answer = await acceptSends(plainDeps(), as, {
    sends: bodies.map((body, i) =>
      normalizeSend({ from: 'app@acme.test', to: `body${i}@example.test`, subject: 'Bodies', ...body }),
    ),
    shape: 'batch',
  });
  assert.is(answer.accepted.length, 4);
  const rows = await ctx.db.sequelize.query<{ id: string; html: string | null; text: string | null }>(
    'SELECT id, html_body AS html, text_body AS text FROM email_logs WHERE id IN (:ids)',
    { replacements: { ids: answer.accepted.map((a) => a.id) }, type: QueryTypes.SELECT },
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  answer.accepted.forEach((accepted, i) => {
    const row = byId.get(accepted.id)!;
    assert.is(row.html, bodies[i].htmlBody ?? null, `html of send ${i}`);
    assert.is(row.text, bodies[i].textBody ?? null, `text of send ${i}`);
  });
});

test('a message spooled at accept is handed over under the ids of its spool rows, which hold it too', async () => {
  const as = await tenant(10);
  // Mail that really leaves (direct delivery, a live key) goes from a verified domain.
  await addVerifiedDomain(ctx.db.sequelize, ctx.deps.secrets, as.tenantId);
  const handed: { ids: string[]; message: Buffer }[] = [];
  const deps: SendDeps = {
    ...plainDeps(),
    config: { ...ctx.config, delivery: 'direct' },
    // Direct mail needs the From domain's DMARC record (domains/sender-rules.ts); no DNS here.
    senderRules: {
      dmarc: async () => ({ kind: 'found', name: '_dmarc.acme.test', record: 'v=DMARC1; p=none' }),
      forget: () => {},
    },
  };
  const answer = await acceptSends(deps, as, {
    sends: [send('a@one.test', ['b@two.test', 'c@two.test'])],
    shape: 'single',
    spoolAtAccept: async (accepted) => {
      const message = Buffer.from(`Message-ID: ${accepted.messageId}\r\n\r\nHello\r\n`, 'latin1');
      return {
        message,
        envelopeFrom: 'bounces@acme.test',
        recipients: ['a@one.test', 'b@two.test', 'c@two.test'],
        sentHeaders: '{}',
        handOver: (ids) => handed.push({ ids, message }),
      };
    },
  });
  assert.is(answer.accepted.length, 1);
  const rows = await ctx.db.sequelize.query<{ id: string; domain: string; message: Buffer }>(
    'SELECT id::text AS id, domain, message FROM mta_spool WHERE email_id = :id ORDER BY domain',
    { replacements: { id: answer.accepted[0].id }, type: QueryTypes.SELECT },
  );
  // One spool row per destination domain, each the durable copy of the message handed over once.
  assert.equal(
    rows.map((row) => row.domain),
    ['one.test', 'two.test'],
  );
  assert.is(handed.length, 1);
  assert.equal([...handed[0].ids].sort(), rows.map((row) => row.id).sort());
  for (const row of rows) assert.ok(row.message.equals(handed[0].message), `the message of ${row.domain}`);
});

test('the simple-mailbox shortcut reads every address exactly as the address parser does', () => {
  const inputs = [
    'reader@example.test',
    'Reader <reader@example.test>',
    'A B C <x.y+z_%-w@sub.example-co.org>',
    'John 2 <j@e.io>',
    'a.@b.c',
    '.a@b.c',
    'a..b@c.d',
    'x@-y.com',
    // Not simple: the parser reads these (names quoted or spaced, lists, groups, comments).
    'A  B <a@b.c>',
    ' Reader <reader@example.test>',
    '"Reader, Jr" <r@example.test>',
    'a@b.c, d@e.f',
    'group: a@b.c;',
    'a@b.c (comment)',
    '=?utf-8?Q?R=C3=A9a?= <r@example.test>',
    'Reader<reader@example.test>',
    'reader@example.test>',
  ];
  for (const input of inputs) assert.equal(mailboxParts(input), addressparser(input, { flatten: true }), input);
});

test.run();
