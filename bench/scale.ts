// npm run bench:scale — history at scale (issue 17), against the real daemon in a child process on
// a fresh PostgreSQL database (DATABASE_URL):
//   1. on the empty database: the accept rate (POST /emails/send, 4 in flight, ACCEPT_SECONDS);
//   2. SCALE_LOGS logs in the bench tenant, written through the API as users write them (issue 27):
//      POST /emails/batch, 100 recipients each (userN@example.org, N < 200,000), one tag of 100 per batch,
//      4 requests in flight, the daemon in ROLE=api so nothing drains; meanwhile, every 15 s, the logs
//      written 5 s before are marked 2 % FAILED and the rest SENT in SQL and their send jobs deleted, as a
//      drain settles them. Statistics and dead rows are what autovacuum leaves (on a server with
//      autovacuum off, as this machine's CI server, the bench applies autovacuum's own rules after each
//      settling pass; SCALE_ANALYZE=1 runs VACUUM (ANALYZE) at the end in any case); then a CHECKPOINT,
//      so that the measurement does not share the disk with the write-out of the seeding (a 10 M run
//      measured during it read recipient searches at p99 1.9 s);
//   3. over HTTP, SAMPLES requests each: list page 1, a deep page (page × limit = 10,000), the page
//      after it by cursor, recipient search, message-id search, status + time range, tag + time
//      range, log detail; in SQL the live tail's poll query; the accept rate again;
//   4. claiming 10 jobs (claimJobs, then deleting them as a finished job is) from 1,000 waiting jobs,
//      then from 1,000,000 waiting + scheduled jobs.
// Results go to bench/scale-results.json with the machine and its load average.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueryTypes, type Sequelize } from 'sequelize';
import { startDaemonProcess, type Child } from './children.ts';
import { autovacuumPass, createBenchDatabase, SENDER_DOMAIN, type BenchDatabase } from './database.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { machineInfo } from './machine.ts';
import { resultsFile } from './results-file.ts';
import { percentile } from './latency.ts';
import { claimJobs } from '../daemon/queue/claim.ts';
import { logChangesSince } from '../daemon/modules/emails/sql/log-stream.ts';
import type { QueueName } from '../shared/constants.ts';

const LOGS = Number(process.env.SCALE_LOGS ?? 1_000_000);
/** Requests per measurement: with 100 the p99 is the second-slowest, not simply the slowest. */
const SAMPLES = Number(process.env.SCALE_SAMPLES ?? 100);
const ACCEPT_SECONDS = Number(process.env.ACCEPT_SECONDS ?? 5);
const BACKLOG = Number(process.env.SCALE_BACKLOG ?? 1_000_000);
const JWT_SECRET = 'bench-secret-bench-secret-bench-secret-0123456789';
const log = (message: string) => console.error(`[bench:scale ${new Date().toISOString().slice(11, 19)}] ${message}`);

const baseUrl = process.env.DATABASE_URL;
if (!baseUrl) {
  console.error('bench:scale needs DATABASE_URL (a PostgreSQL server where it may create a database).');
  process.exit(2);
}
const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-scale-'));
const held: { database: BenchDatabase | null; daemon: Child | null } = { database: null, daemon: null };

interface Timing {
  p50: number;
  p99: number;
  max: number;
}

async function timed(samples: number, run: (i: number) => Promise<void>): Promise<Timing> {
  const ms: number[] = [];
  for (let i = 0; i < samples; i += 1) {
    const start = performance.now();
    await run(i);
    ms.push(performance.now() - start);
  }
  ms.sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 10) / 10;
  return { p50: round(percentile(ms, 50)), p99: round(percentile(ms, 99)), max: round(ms[ms.length - 1]) };
}

async function get(url: string, key: string, path: string): Promise<any> {
  const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  const body = await res.json();
  if (!res.ok) throw new Error(`GET ${path} → ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/** Sends accepted per second, 4 requests in flight, for ACCEPT_SECONDS. */
async function acceptRate(url: string, key: string): Promise<number> {
  let accepted = 0;
  const end = performance.now() + ACCEPT_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (performance.now() < end) {
        const res = await fetch(`${url}/emails/send`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            from: `app@${SENDER_DOMAIN}`,
            to: `accept${accepted}@example.org`,
            subject: 'Hi',
            textBody: 'hello',
          }),
        });
        await res.arrayBuffer();
        if (res.status !== 202 && res.status !== 200) throw new Error(`POST /emails/send → ${res.status}`);
        accepted += 1;
      }
    }),
  );
  return Math.round(accepted / ACCEPT_SECONDS);
}

/** Writes LOGS logs through POST /emails/batch; answers the seconds taken and the span they cover. */
async function seedThroughApi(url: string, key: string): Promise<{ seconds: number; from: number; to: number }> {
  const start = performance.now();
  const from = Date.now();
  let next = 0;
  const batches = Math.ceil(LOGS / 100);
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < batches) {
        const batch = next++;
        const recipients = Array.from({ length: Math.min(100, LOGS - batch * 100) }, (_, i) => ({
          to: `user${(batch * 100 + i) % 200000}@example.org`,
        }));
        const res = await fetch(`${url}/emails/batch`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            from: `app@${SENDER_DOMAIN}`,
            subject: `Receipt ${batch}`,
            htmlBody: `<p>Thanks ${batch}</p>`,
            tags: [`tag${batch % 100}`],
            recipients,
          }),
        });
        const body = await res.text();
        if (!res.ok) throw new Error(`POST /emails/batch → ${res.status} ${body}`);
        if (batch % 1000 === 0) log(`written ${batch * 100} logs`);
      }
    }),
  );
  return { seconds: Math.round((performance.now() - start) / 1000), from, to: Date.now() };
}

/** How long a written log stays QUEUED before the settler marks its outcome: a drain has sent it by then. */
const SETTLE_AFTER = '5 seconds';
/** Milliseconds between the settler's passes while the seeding runs. */
const SETTLE_EVERY_MS = 15_000;

/**
 * The drain's outcomes, written in SQL while the seeding runs, as a drain settles logs seconds after they
 * are accepted: 2 % FAILED, the rest SENT, for the logs written up to SETTLE_AFTER ago, and their send jobs
 * deleted as finished jobs are; after each pass, what autovacuum would start by its own rules where it is
 * off (autovacuumPass). Settling 10 M logs after the seeding instead took an hour on the 2026-11-27 VM
 * (~90 s per 250,000, each a non-HOT update through every index of a table long out of cache) and left a
 * table no drain leaves: every row dead once, nothing vacuumed until the end.
 */
async function settleWhileSeeding(sequelize: Sequelize, tenantId: string, seeding: Promise<unknown>): Promise<void> {
  let seeded = false;
  const seedingEnded = seeding.then(
    () => void (seeded = true),
    () => void (seeded = true),
  );
  let since = '-infinity';
  for (;;) {
    const passStarted = Date.now();
    const last = seeded; // the pass after the seeding ended settles every log
    const [{ until }] = await sequelize.query<{ until: string }>(
      `SELECT (now() ${last ? "+ interval '1 minute'" : `- interval '${SETTLE_AFTER}'`})::text AS until`,
      { type: QueryTypes.SELECT },
    );
    // From a minute before the last pass's bound: a batch whose transaction began before it but committed
    // after the pass read is settled by the next one (the status index finds only QUEUED rows).
    await sequelize.query(
      `UPDATE email_logs SET status = CASE WHEN abs(hashtext(id::text)) % 50 = 0 THEN 'FAILED' ELSE 'SENT' END,
              attempts = 1, sent_at = now(), updated_at = now()
        WHERE tenant_id = :tenantId AND status = 'QUEUED'
          AND created_at >= CAST(:since AS timestamptz) - interval '1 minute' AND created_at < CAST(:until AS timestamptz)`,
      { replacements: { tenantId, since, until } },
    );
    await sequelize.query(`DELETE FROM jobs WHERE queue = 'send' AND run_at < CAST(:until AS timestamptz)`, {
      replacements: { until },
    });
    since = until;
    for (const line of await autovacuumPass(sequelize, ['email_logs', 'email_log_tags', 'jobs']))
      log(`autovacuum is off: ${line}`);
    if (last) break;
    await Promise.race([seedingEnded, sleep(Math.max(0, SETTLE_EVERY_MS - (Date.now() - passStarted)))]);
  }
  await seeding;
  const [left] = await sequelize.query<{ n: string }>(
    `SELECT count(*)::text AS n FROM email_logs WHERE tenant_id = :tenantId AND status = 'QUEUED'`,
    { type: QueryTypes.SELECT, replacements: { tenantId } },
  );
  if (Number(left.n) !== 0) throw new Error(`${left.n} logs were left QUEUED`);
}

/** Claims measured per backlog: 40 claims of 10 take 400 of the small backlog's 500 due jobs. */
const CLAIM_SAMPLES = 40;

async function claimTime(sequelize: Sequelize, queue: string, samples: number): Promise<Timing> {
  return timed(samples, async (i) => {
    const jobs = await claimJobs(sequelize, queue as QueueName, `bench:${i}`, 10, 60_000);
    if (jobs.length !== 10) throw new Error(`claimed ${jobs.length} jobs, wanted 10`);
    await sequelize.query('DELETE FROM jobs WHERE id IN (:ids)', { replacements: { ids: jobs.map((job) => job.id) } });
  });
}

async function backlog(sequelize: Sequelize, queue: string, count: number): Promise<void> {
  // Half due (waiting), half scheduled for tomorrow: both sit in the index the claim walks.
  await sequelize.query(
    `INSERT INTO jobs (queue, payload, run_at) SELECT :queue, jsonb_build_object('n', g),
            CASE WHEN g % 2 = 0 THEN now() - make_interval(secs => g % 3600) ELSE now() + interval '1 day' END
       FROM generate_series(1, :count) AS g`,
    { replacements: { queue, count } },
  );
  await sequelize.query('ANALYZE jobs');
}

async function main() {
  const database = (held.database = await createBenchDatabase(baseUrl!, JWT_SECRET, dataDir));
  const machine = machineInfo(database.postgresVersion);
  const sequelize = database.db.sequelize;
  const [{ autovacuum: autovacuumSetting }] = await sequelize.query<{ autovacuum: string }>('SHOW autovacuum', {
    type: QueryTypes.SELECT,
  });
  const daemon = (held.daemon = await startDaemonProcess('daemon', {
    DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    JWT_SECRET,
    ROLE: 'api',
  }));
  const url = daemon.readyText;
  const key = database.apiKey;
  log(`daemon ready at ${url}`);

  const acceptEmpty = await acceptRate(url, key);
  log(`accept on the empty database: ${acceptEmpty}/s`);
  const seeding = seedThroughApi(url, key);
  await settleWhileSeeding(sequelize, database.tenantId, seeding);
  const seeded = await seeding;
  const seedSeconds = seeded.seconds;
  const settleStarted = Date.now();
  if (process.env.SCALE_ANALYZE === '1') await sequelize.query('VACUUM (ANALYZE) email_logs, email_log_tags, jobs');
  const checkpointStarted = Date.now();
  await sequelize.query('CHECKPOINT');
  log(`checkpoint before measuring (${Date.now() - checkpointStarted} ms)`);
  const settleSeconds = Math.round((Date.now() - settleStarted) / 1000);
  const [size] = await sequelize.query<{ bytes: string }>(
    `SELECT sum(pg_total_relation_size(c.oid))::text AS bytes FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'email_logs'::regclass`,
    { type: QueryTypes.SELECT },
  );
  log(
    `${LOGS} logs in ${seedSeconds} s (outcomes settled while writing; then ${settleSeconds} s to measuring), email_logs ${Math.round(Number(size.bytes) / 1024 ** 2)} MB`,
  );

  // Searches within a time range look at a different fiftieth of the written span each time (as a day of
  // a 50-day history): a support person's searches do not repeat, so neither do these.
  const dayRange = (i: number) => {
    const slice = (seeded.to - seeded.from) / 50;
    const until = seeded.to - ((i * 7) % 48) * slice;
    return `since=${new Date(until - slice).toISOString()}&until=${new Date(until).toISOString()}`;
  };
  const page1 = await get(url, key, '/emails/logs?limit=20');
  // The deepest numbered page (page × limit = 10,000), or with fewer logs the last full page before the end,
  // so that its cursor leads somewhere.
  const deepPage = Math.max(1, Math.min(100, Math.floor((LOGS - 1) / 100)));
  const deep = await get(url, key, `/emails/logs?limit=100&page=${deepPage}`);
  const sample = page1.data[0];
  const [{ at: tailFrom }] = await sequelize.query<{ at: string }>(
    `SELECT (now() - interval '3 seconds')::text AS at`,
    { type: QueryTypes.SELECT },
  );
  const messageIds = (
    await sequelize.query<{ message_id: string }>(
      `SELECT message_id FROM email_logs TABLESAMPLE SYSTEM (1) WHERE tenant_id = :tenantId LIMIT ${SAMPLES}`,
      { type: QueryTypes.SELECT, replacements: { tenantId: database.tenantId } },
    )
  ).map((row) => row.message_id);
  const queries = {
    listPage1: await timed(SAMPLES, async () => void (await get(url, key, '/emails/logs?limit=20'))),
    deepPage100x100: await timed(
      SAMPLES,
      async () => void (await get(url, key, `/emails/logs?limit=100&page=${deepPage}`)),
    ),
    cursorPastDeepPage: await timed(
      SAMPLES,
      async () => void (await get(url, key, `/emails/logs?limit=100&cursor=${deep.meta.nextCursor}`)),
    ),
    recipientSearch: await timed(
      SAMPLES,
      async (i) => void (await get(url, key, `/emails/logs?to=user${(i * 7919) % 200000}@example.org`)),
    ),
    recipientNamedForm: await timed(
      SAMPLES,
      async (i) =>
        void (await get(
          url,
          key,
          `/emails/logs?to=${encodeURIComponent(`X <USER${(i * 104729) % 200000}@Example.org>`)}`,
        )),
    ),
    messageIdSearch: await timed(
      SAMPLES,
      async (i) =>
        void (await get(url, key, `/emails/logs?messageId=${encodeURIComponent(messageIds[i % messageIds.length])}`)),
    ),
    recipientInRange: await timed(
      SAMPLES,
      async (i) => void (await get(url, key, `/emails/logs?to=user${(i * 7919) % 200000}@example.org&${dayRange(i)}`)),
    ),
    status: await timed(SAMPLES, async () => void (await get(url, key, `/emails/logs?status=FAILED`))),
    tag: await timed(SAMPLES, async (i) => void (await get(url, key, `/emails/logs?tag=tag${(i * 37) % 100}`))),
    statusInRange: await timed(
      SAMPLES,
      async (i) => void (await get(url, key, `/emails/logs?status=FAILED&${dayRange(i)}`)),
    ),
    tagInRange: await timed(
      SAMPLES,
      async (i) => void (await get(url, key, `/emails/logs?tag=tag${(i * 37) % 100}&${dayRange(i)}`)),
    ),
    logDetail: await timed(SAMPLES, async () => void (await get(url, key, `/emails/logs/${sample.id}`))),
    // The stream's poll (both of its statements), from a cursor a few seconds back.
    liveTailPoll: await timed(
      SAMPLES,
      async () => void (await logChangesSince(sequelize, database.tenantId, { at: tailFrom, id: sample.id })),
    ),
  };
  log(`queries: ${JSON.stringify(queries)}`);
  const pageMeta = { total: page1.meta.total, totalIsEstimate: page1.meta.totalIsEstimate };
  const acceptSeeded = await acceptRate(url, key);
  log(`accept beside ${LOGS} logs: ${acceptSeeded}/s`);

  await backlog(sequelize, 'bench-small', 1_000);
  const claimSmall = await claimTime(sequelize, 'bench-small', CLAIM_SAMPLES);
  await backlog(sequelize, 'bench-large', BACKLOG);
  const claimLarge = await claimTime(sequelize, 'bench-large', CLAIM_SAMPLES);
  log(`claim 10 from 1,000: ${JSON.stringify(claimSmall)}; from ${BACKLOG}: ${JSON.stringify(claimLarge)}`);

  const results = {
    machine,
    loadAverageAtEnd: loadavg().map((l) => Math.round(l * 100) / 100),
    settings: { logs: LOGS, samples: SAMPLES, acceptSeconds: ACCEPT_SECONDS, backlog: BACKLOG, deepPage },
    seeded:
      'through the API: POST /emails/batch (100 recipients each), one tenant; outcomes set in SQL every 15 s while writing, for the logs written 5 s before',
    analyzed:
      process.env.SCALE_ANALYZE === '1'
        ? 'VACUUM (ANALYZE) after the outcomes'
        : autovacuumSetting === 'on'
          ? 'as autovacuum left it'
          : "autovacuum off: the bench applied autovacuum's rules after each settling pass",
    autovacuum: autovacuumSetting,
    seedSeconds,
    settleSeconds,
    emailLogsMB: Math.round(Number(size.bytes) / 1024 ** 2),
    page1Meta: pageMeta,
    milliseconds: queries,
    acceptPerSecond: { emptyDatabase: acceptEmpty, withHistory: acceptSeeded },
    claim10Milliseconds: { from1000: claimSmall, [`from${BACKLOG}`]: claimLarge },
  };
  writeFileSync(resultsFile('scale-results.json'), `${JSON.stringify(results, null, 2)}\n`);
  console.log(JSON.stringify(results, null, 2));
}

try {
  await main();
} finally {
  await held.daemon?.stop();
  if (process.env.SCALE_KEEP_DB === '1') console.error(`kept the bench database: ${held.database?.url}`);
  else await held.database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
}
