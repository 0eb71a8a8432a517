// npm run bench:lists — contacts and campaigns at list scale (issue 21), against the real daemon in a
// child process on a fresh PostgreSQL database (DATABASE_URL):
//   1. POST /contacts/bulk: LISTS_CONTACTS contacts, 1,000 per request, 4 requests in flight;
//   2. POST /contacts/import: as many again from a CSV file streamed in one request;
//   3. a campaign to the CSV contacts: from POST /campaigns/{id}/send to the last recipient queued
//      (the campaign SENT), i.e. the expansion rate, with the daemon's workers delivering beside it;
//   4. the daemon stopped, the same expansion again (a second campaign to the same contacts, its
//      job run by handleCampaignJob in this process): its own rate, without the drain beside it.
// Goals: ≥ 5,000 contacts/s over bulk, ≥ 10,000/s from CSV, 100,000 recipients queued in ≤ 30 s.
// The baseline, first and in the same run: bare Fastify doing one multi-row pg INSERT of each request's
// contacts into a table shaped like contacts (bench/baseline-server.ts contacts), loaded as phase 1
// loads the daemon; bulk and CSV are reported as ratios to it too (issue 51: the bulk API fell tenfold
// and no figure beside it said so).
// LISTS_CONTACTS defaults to 100,000; results go to bench/lists-results.json. LISTS_SHORT=1 (bench:check)
// measures the baseline, the bulk API and the CSV import only. Each of those phases also reports its CPU
// per contact, in the server process and in the database's PostgreSQL backends (less moved by the load).
import { createReadStream, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { cpuTimeMs, freePort, startChild, startDaemonProcess, type Child } from './children.ts';
import { resultsFile } from './results-file.ts';
import { createBenchDatabase, type BenchDatabase } from './database.ts';
import { machineInfo } from './machine.ts';
import pino from 'pino';
import { loadConfig } from '../daemon/config.ts';
import { loadSecrets } from '../daemon/secrets.ts';
import { closeMailResources } from '../daemon/mail/resources.ts';
import { createMailResources } from '../daemon/modules/mail-resources.ts';
import { handleCampaignJob } from '../daemon/modules/campaigns/expand.ts';
import { startCampaignSend } from '../daemon/modules/campaigns/send.ts';

const CONTACTS = Number(process.env.LISTS_CONTACTS ?? 100_000);
const SHORT = process.env.LISTS_SHORT === '1';
const IN_FLIGHT = 4;
// Node flags for the daemon only, e.g. LISTS_DAEMON_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/p' to profile
// it under this load (NODE_OPTIONS refuses --cpu-prof, and would profile the bench and baseline too).
const DAEMON_NODE_ARGS = (process.env.LISTS_DAEMON_NODE_ARGS ?? '').split(' ').filter(Boolean);
const JWT_SECRET = 'bench-secret-bench-secret-bench-secret-0123456789';
const log = (message: string) => console.error(`[bench:lists ${new Date().toISOString().slice(11, 19)}] ${message}`);

const baseUrl = process.env.DATABASE_URL;
if (!baseUrl) {
  console.error('bench:lists needs DATABASE_URL (a PostgreSQL server where it may create a database).');
  process.exit(2);
}
const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-lists-'));
// Held outside main() so that the finally block can clean up after a failure half-way.
const held: { database: BenchDatabase | null; daemon: Child | null; baseline: Child | null } = {
  database: null,
  daemon: null,
  baseline: null,
};

async function api(url: string, key: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const parsed = await res.json();
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

/** CONTACTS contacts over POST /contacts/bulk, 1,000 a request, IN_FLIGHT requests at a time; seconds. */
async function postContacts(url: string, key: string, prefix: string): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      for (;;) {
        const start = next;
        next += 1000;
        if (start >= CONTACTS) return;
        const contacts = Array.from({ length: Math.min(1000, CONTACTS - start) }, (_, i) => ({
          email: `${prefix}${start + i}@example.com`,
          firstName: `Bulk ${start + i}`,
          optIn: true,
          tags: ['bulk'],
          attributes: { n: start + i },
        }));
        const answer = await api(url, key, 'POST', '/contacts/bulk', { contacts });
        if (answer.failed) throw new Error(`bulk: ${answer.failed} rows failed`);
      }
    }),
  );
  return (performance.now() - started) / 1000;
}

/**
 * CPU spent so far by a server process and by the PostgreSQL backends of the bench's database (ms, per
 * backend pid): a phase's CPU per contact is a figure the machine's other load barely moves, unlike its
 * rate. Backends that close during a phase are missed (the pools keep theirs open).
 */
async function cpuSnapshot(
  database: BenchDatabase,
  pid: number,
): Promise<{ process: number; backends: Map<number, number> }> {
  const pids = await database.db.sequelize.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    { type: 'SELECT' as never },
  );
  const backends = new Map<number, number>();
  for (const { pid: backend } of pids) {
    const ms = cpuTimeMs(backend);
    if (ms !== null) backends.set(backend, ms);
  }
  return { process: cpuTimeMs(pid) ?? Number.NaN, backends };
}

/** CPU per contact (ms) of the server process and of PostgreSQL between two snapshots. */
async function cpuPerContact(
  database: BenchDatabase,
  pid: number,
  before: Awaited<ReturnType<typeof cpuSnapshot>>,
): Promise<{ serverMs: number; postgresMs: number }> {
  const after = await cpuSnapshot(database, pid);
  let postgres = 0;
  for (const [backend, ms] of after.backends) postgres += ms - (before.backends.get(backend) ?? 0);
  const perContact = (ms: number) => Math.round((ms / CONTACTS) * 1000) / 1000;
  return { serverMs: perContact(after.process - before.process), postgresMs: perContact(postgres) };
}

async function main() {
  const database = (held.database = await createBenchDatabase(baseUrl!, JWT_SECRET, dataDir));
  // 0. The baseline: bare Fastify + one multi-row INSERT per request, the same requests.
  await database.db.sequelize.query(`CREATE TABLE bench_contacts (LIKE contacts INCLUDING DEFAULTS INCLUDING INDEXES)`);
  const baselinePort = await freePort();
  held.baseline = await startChild('baseline (contacts)', 'baseline-server.ts', ['contacts', String(baselinePort)], {
    env: { ...process.env, DATABASE_URL: database.url },
  });
  const baselinePid = held.baseline.process.pid!;
  const baselineCpuBefore = await cpuSnapshot(database, baselinePid);
  const baselineSeconds = await postContacts(`http://127.0.0.1:${baselinePort}`, '', 'base');
  const baselineCpu = await cpuPerContact(database, baselinePid, baselineCpuBefore);
  await held.baseline.stop();
  held.baseline = null;
  log(`baseline (Fastify + multi-row INSERT): ${CONTACTS} in ${baselineSeconds.toFixed(1)} s`);

  const daemon = (held.daemon = await startDaemonProcess(
    'daemon',
    {
      ROLE: 'all',
      DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      JWT_SECRET,
    },
    { nodeArgs: DAEMON_NODE_ARGS },
  ));
  const url = daemon.readyText;
  const key = database.apiKey;
  log(`daemon ready at ${url}; ${CONTACTS} contacts per phase`);

  // 1. Bulk API.
  const daemonPid = daemon.process.pid!;
  const bulkCpuBefore = await cpuSnapshot(database, daemonPid);
  const bulkSeconds = await postContacts(url, key, 'bulk');
  const bulkCpu = await cpuPerContact(database, daemonPid, bulkCpuBefore);
  log(`bulk: ${CONTACTS} in ${bulkSeconds.toFixed(1)} s`);

  // 2. CSV import, streamed.
  const csv = join(dataDir, 'contacts.csv');
  const lines = ['Email,First,Last,Opt in,Tags,Plan'];
  for (let i = 0; i < CONTACTS; i += 1) lines.push(`csv${i}@example.com,First ${i},"Last, ${i}",yes,csv;news,gold`);
  writeFileSync(csv, lines.join('\n') + '\n');
  const bytes = statSync(csv).size;
  const csvCpuBefore = await cpuSnapshot(database, daemonPid);
  const csvStart = performance.now();
  const res = await fetch(
    `${url}/contacts/import?map=email%3DEmail&map=firstName%3DFirst&map=lastName%3DLast&map=optIn%3DOpt%20in&map=attributes.plan%3DPlan`,
    {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv' },
      body: Readable.toWeb(createReadStream(csv)) as ReadableStream,
      duplex: 'half',
    } as RequestInit,
  );
  const imported = await res.json();
  const csvSeconds = (performance.now() - csvStart) / 1000;
  const csvCpu = await cpuPerContact(database, daemonPid, csvCpuBefore);
  if (imported.created !== CONTACTS) throw new Error(`csv: ${JSON.stringify(imported).slice(0, 500)}`);
  log(`csv: ${CONTACTS} (${(bytes / 1024 / 1024).toFixed(1)} MB) in ${csvSeconds.toFixed(1)} s`);
  for (const [phase, cpu] of [
    ['baseline', baselineCpu],
    ['bulk', bulkCpu],
    ['csv', csvCpu],
  ] as const)
    log(`${phase}: CPU per contact ${cpu.serverMs} ms in the server, ${cpu.postgresMs} ms in PostgreSQL`);
  const baseline = {
    label: 'bare Fastify + multi-row INSERT (1,000 rows a request, 4 in flight)',
    seconds: round(baselineSeconds),
    contactsPerSecond: Math.round(CONTACTS / baselineSeconds),
    cpuMsPerContact: baselineCpu,
  };
  const imports = {
    at: new Date().toISOString(),
    machine: machineInfo(database.postgresVersion),
    contacts: CONTACTS,
    baseline,
    bulkApi: {
      seconds: round(bulkSeconds),
      contactsPerSecond: Math.round(CONTACTS / bulkSeconds),
      ratioToBaseline: ratioTo(bulkSeconds, baselineSeconds),
      cpuMsPerContact: bulkCpu,
      goal: 5000,
    },
    csvImport: {
      seconds: round(csvSeconds),
      megabytes: round(bytes / 1024 / 1024),
      contactsPerSecond: Math.round(CONTACTS / csvSeconds),
      ratioToBaseline: ratioTo(csvSeconds, baselineSeconds),
      cpuMsPerContact: csvCpu,
      goal: 10000,
    },
  };
  if (SHORT) {
    writeFileSync(resultsFile('lists-results.json'), `${JSON.stringify(imports, null, 2)}\n`);
    console.log(JSON.stringify(imports, null, 2));
    return;
  }

  // 3. A campaign to the CSV contacts.
  const [template] = await database.db.sequelize.query<{ id: string }>(
    `INSERT INTO templates (tenant_id, name, slug, editor_mode, default_locale) VALUES (:t, 'News', 'news', 'html', 'en') RETURNING id`,
    { replacements: { t: database.tenantId }, type: 'SELECT' as never },
  );
  await database.db.sequelize.query(
    `INSERT INTO template_versions (tenant_id, template_id, version, locale, subject, html_body, published_at) VALUES (:t, :id, 1, 'en', 'News for {{ contact.firstName }}', '<p>Hello {{ contact.firstName }}</p>', now())`,
    { replacements: { t: database.tenantId, id: template.id } },
  );
  const campaign = await api(url, key, 'POST', '/campaigns', {
    name: 'Bench',
    templateId: template.id,
    audience: { tag: 'csv' },
  });
  const campaignCpuBefore = await cpuSnapshot(database, daemonPid);
  const sendStart = performance.now();
  const started = await api(url, key, 'POST', `/campaigns/${campaign.id}/send`, {
    from: 'Bench News <news@bench.example>',
  });
  const answeredMs = performance.now() - sendStart;
  // Polled through the list of SENDING campaigns: GET /campaigns/{id} also counts the audience as it
  // is now (audienceSize), a count over 200,000 contacts that every 100 ms took a core from the
  // expansion it measures. The final state is read once.
  let state = started;
  while (state.status === 'SENDING') {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const sending = await api(url, key, 'GET', '/campaigns?status=SENDING&limit=100');
    state =
      sending.data.find((c: { id: string }) => c.id === campaign.id) ??
      (await api(url, key, 'GET', `/campaigns/${campaign.id}`));
  }
  const queuedSeconds = (performance.now() - sendStart) / 1000;
  // The CPU up to the last recipient queued includes the drain's beside it: how far it got is said too.
  const campaignCpu = await cpuPerContact(database, daemonPid, campaignCpuBefore);
  const [{ drained }] = await database.db.sequelize.query<{ drained: number }>(
    `SELECT count(*)::int AS drained FROM email_logs WHERE tenant_id = :t AND status <> 'QUEUED'`,
    { replacements: { t: database.tenantId }, type: 'SELECT' as never },
  );
  if (state.status !== 'SENT' || state.accepted !== CONTACTS) throw new Error(`campaign: ${JSON.stringify(state)}`);
  log(
    `campaign: ${CONTACTS} recipients queued in ${queuedSeconds.toFixed(1)} s (202 after ${answeredMs.toFixed(0)} ms), ${drained} delivered by then; CPU per recipient ${campaignCpu.serverMs} ms in the daemon, ${campaignCpu.postgresMs} ms in PostgreSQL`,
  );

  // 4. The expansion alone: nothing delivers, nothing else writes.
  const alone = await api(url, key, 'POST', '/campaigns', {
    name: 'Alone',
    templateId: template.id,
    audience: { tag: 'csv' },
  });
  await held.daemon?.stop();
  held.daemon = null;
  const config = loadConfig({ NODE_ENV: 'production', DATABASE_URL: database.url, DATA_DIR: dataDir, JWT_SECRET });
  const secrets = loadSecrets(dataDir, JWT_SECRET);
  const worker = {
    sequelize: database.db.sequelize,
    sql: database.db.sql,
    config,
    secrets,
    ...createMailResources(config, secrets, database.db.sequelize),
    log: pino({ level: 'silent' }),
    workerId: 'bench',
  };
  const owner = {
    tenantId: database.tenantId,
    adminId: null,
    apiKeyId: null,
    role: null,
    isPlatformAdmin: false,
    testMode: false,
  };
  await startCampaignSend(database, owner, {
    id: alone.id,
    body: { from: 'Bench News <news@bench.example>' },
    testMode: null,
  });
  const aloneCpuBefore = await cpuSnapshot(database, process.pid);
  const aloneStart = performance.now();
  const job = {
    id: '0',
    queue: 'campaign' as const,
    tenantId: database.tenantId,
    payload: { campaignId: alone.id, tenantId: database.tenantId },
    attempts: 0,
    maxAttempts: 1,
    runAt: new Date(),
    createdAt: new Date(),
  };
  const outcome = await handleCampaignJob(job, worker).finally(() => closeMailResources(worker));
  if (outcome.kind !== 'done') throw new Error(`expansion alone: ${JSON.stringify(outcome)}`);
  const aloneSeconds = (performance.now() - aloneStart) / 1000;
  const aloneCpu = await cpuPerContact(database, process.pid, aloneCpuBefore);
  const [aloneRow] = await database.db.sequelize.query<{ accepted_count: number }>(
    'SELECT accepted_count FROM campaigns WHERE id = :id',
    { replacements: { id: alone.id }, type: 'SELECT' as never },
  );
  if (aloneRow.accepted_count !== CONTACTS) throw new Error(`expansion alone: ${JSON.stringify(aloneRow)}`);
  log(
    `expansion alone: ${CONTACTS} recipients in ${aloneSeconds.toFixed(1)} s; CPU per recipient ${aloneCpu.serverMs} ms in this process, ${aloneCpu.postgresMs} ms in PostgreSQL`,
  );

  const results = {
    ...imports,
    campaign: {
      recipients: CONTACTS,
      sendAnsweredMs: Math.round(answeredMs),
      secondsToLastQueued: round(queuedSeconds),
      recipientsPerSecond: Math.round(CONTACTS / queuedSeconds),
      // CPU per recipient up to the last one queued, the drain's beside it included (deliveredByThen).
      cpuMsPerRecipient: campaignCpu,
      deliveredByThen: drained,
      goalSecondsFor100k: 30,
      // Phase 4: the same expansion with the daemon stopped (no drain beside it).
      expansionAloneSeconds: round(aloneSeconds),
      expansionAloneRecipientsPerSecond: Math.round(CONTACTS / aloneSeconds),
      expansionAloneCpuMsPerRecipient: aloneCpu,
    },
  };
  writeFileSync(resultsFile('lists-results.json'), `${JSON.stringify(results, null, 2)}\n`);
  console.log(JSON.stringify(results, null, 2));
}

const round = (n: number) => Math.round(n * 10) / 10;
/** The rate of a phase that took `seconds` over the baseline's (same count of contacts). */
const ratioTo = (seconds: number, baselineSeconds: number) => Math.round((baselineSeconds / seconds) * 100) / 100;

try {
  await main();
} finally {
  await held.baseline?.stop();
  await held.daemon?.stop();
  await held.database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
}
