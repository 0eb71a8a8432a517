// A campaign send survives kill -9: the real daemon (child process, real worker threads) expands a
// campaign of thousands of contacts; it is SIGKILLed part-way through the expansion and started
// again on the same database. The campaign job's lease runs out, the job runs again from the
// position committed with the last chunk, and the campaign ends SENT with exactly one log per
// contact: none sent twice by the expansion, none skipped. The daemons run with a 10 s lease
// (JOB_LEASE_MS) rather than the campaign queue's 20 s: the same rule, a shorter wait.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  api,
  countRows,
  killAllDaemons,
  openWorldDatabase,
  seedSendWorld,
  startChildDaemon,
  stopChildDaemon,
  type SendWorld,
} from './helpers/send-daemon.ts';
import { waitFor } from './helpers/wait.ts';

const CONTACTS = process.env.DATABASE_URL ? 10_000 : 1_500;
const TIME_BOUND_MS = process.env.DATABASE_URL ? 180_000 : 300_000;

const startedAt = Date.now();
const phases: string[] = [];
const phase = (name: string) => phases.push(`${name} ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);

let world: SendWorld | null = null;
const watchdog = setTimeout(() => {
  killAllDaemons();
  console.error(`campaign-crash: over the ${TIME_BOUND_MS / 1000} s bound; daemons killed (${phases.join(', ')})`);
  process.exit(1);
}, TIME_BOUND_MS);
watchdog.unref();

test.after(async () => {
  killAllDaemons();
  await world?.database.drop();
  clearTimeout(watchdog);
});

test(`kill -9 while a ${CONTACTS}-contact campaign expands: after a restart it is SENT with one log per contact`, async () => {
  world = await seedSendWorld({ LOG_LEVEL: 'warn', JOB_LEASE_MS: '10000' });
  const db = await openWorldDatabase(world);
  let templateId: string;
  try {
    await db.sequelize.query(
      `INSERT INTO contacts (tenant_id, email, opt_in, locale) SELECT :tenantId, 'reader' || i || '@example.test', true, 'en' FROM generate_series(1, :n) AS i`,
      { replacements: { tenantId: world.tenantId, n: CONTACTS } },
    );
    // One contact who did not opt in: never part of the audience.
    await db.sequelize.query(
      `INSERT INTO contacts (tenant_id, email, opt_in) VALUES (:tenantId, 'nope@example.test', false)`,
      { replacements: { tenantId: world.tenantId } },
    );
    const [template] = await db.sequelize.query<{ id: string }>(
      `INSERT INTO templates (tenant_id, name, slug, editor_mode, default_locale) VALUES (:tenantId, 'News', 'news', 'html', 'en') RETURNING id`,
      { replacements: { tenantId: world.tenantId }, type: 'SELECT' as never },
    );
    templateId = template.id;
    await db.sequelize.query(
      `INSERT INTO template_versions (tenant_id, template_id, version, locale, subject, html_body, published_at)
       VALUES (:tenantId, :templateId, 1, 'en', 'News for {{ contact.email }}', '<p>Hello</p>', now())`,
      { replacements: { tenantId: world.tenantId, templateId } },
    );
  } finally {
    await db.close();
  }

  phase('seeded');
  const first = await startChildDaemon(world);
  phase('ready');
  const created = await api(world, 'POST', '/campaigns', { name: 'Crash', templateId, audience: {} });
  assert.is(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id as string;
  const started = await api(world, 'POST', `/campaigns/${id}/send`, { from: 'News <news@acme.test>' });
  assert.is(started.status, 202, JSON.stringify(started.body));
  assert.is(started.body.total, CONTACTS);

  // Kill as soon as the expansion has committed something (it commits a chunk of 1,000 at a time).
  await waitFor('the first chunk', async () => (await api(world!, 'GET', `/campaigns/${id}`)).body.accepted > 0, {
    timeoutMs: 60_000,
    intervalMs: 20,
  });
  first.child.kill('SIGKILL');
  assert.is(await first.exit, null, 'killed by the signal');
  phase('killed');

  const killed = await openWorldDatabase(world);
  try {
    const [row] = await killed.sequelize.query<{ status: string; accepted_count: number; cursor: string | null }>(
      `SELECT status, accepted_count, expansion_cursor::text AS cursor FROM campaigns WHERE id = :id`,
      { replacements: { id }, type: 'SELECT' as never },
    );
    assert.is(row.status, 'SENDING');
    assert.ok(
      row.accepted_count > 0 && row.accepted_count < CONTACTS,
      `killed part-way (${row.accepted_count}/${CONTACTS} accepted)`,
    );
    assert.ok(row.cursor, 'the position was committed with the chunk');
    assert.is(
      await countRows(killed, `SELECT count(*) FROM email_logs WHERE metadata->>'campaignId' = :id`, { id }),
      row.accepted_count,
      'logs and position agree',
    );
  } finally {
    await killed.close();
  }

  const second = await startChildDaemon(world);
  phase('restarted');
  await waitFor(
    "the campaign SENT after the restart (the killed job's lease must expire)",
    async () => (await api(world!, 'GET', `/campaigns/${id}`)).body.status === 'SENT',
    { timeoutMs: TIME_BOUND_MS - 60_000, intervalMs: 250 },
  );
  phase('sent');
  const done = (await api(world, 'GET', `/campaigns/${id}`)).body;
  assert.equal([done.accepted, done.rejected, done.remaining, done.total], [CONTACTS, 0, 0, CONTACTS]);
  assert.is(await stopChildDaemon(second), 0, second.output());

  const after = await openWorldDatabase(world);
  try {
    assert.is(
      await countRows(after, `SELECT count(*) FROM email_logs WHERE metadata->>'campaignId' = :id`, { id }),
      CONTACTS,
      'one log per contact',
    );
    assert.is(
      await countRows(
        after,
        `SELECT count(*) FROM (SELECT to_addresses[1] FROM email_logs WHERE metadata->>'campaignId' = :id GROUP BY 1 HAVING count(*) <> 1) d`,
        { id },
      ),
      0,
      'no contact twice',
    );
    assert.is(
      await countRows(
        after,
        `SELECT count(*) FROM contacts c WHERE c.opt_in AND NOT EXISTS (SELECT 1 FROM email_logs l WHERE l.metadata->>'campaignId' = :id AND l.to_addresses[1] = c.email)`,
        { id },
      ),
      0,
      'no contact skipped',
    );
    assert.is(await countRows(after, `SELECT count(*) FROM email_logs WHERE to_addresses[1] = 'nope@example.test'`), 0);
    assert.is(
      await countRows(after, `SELECT count(*) FROM jobs WHERE queue = 'campaign'`),
      0,
      'the expansion job is finished',
    );
    assert.is(await countRows(after, `SELECT count(*) FROM failed_jobs WHERE queue = 'campaign'`), 0);
  } finally {
    await after.close();
  }
  console.log(`campaign-crash: ${CONTACTS} contacts; ${phases.join(', ')}`);
});

test.run();
