// `npm run bench:mta`: the outbound MTA (issue 28, docs/mta.md "Performance") beside Postfix and Haraka
// in one run. Ten destination domains, each on its own loopback MX host (127.0.0.100–109:25, sinks in a
// child process: bench/mta-sinks.ts), their MX and A records in a DNS server on loopback; the ninth MX
// answers DATA after 200 ms, the tenth defers 10 % of recipients with 451 once. N messages of 100 KB,
// DKIM-signed, one recipient each, spread evenly over the ten domains, one injector per column:
//   svc      the daemon (API node + worker node, NODE_ENV=production, DELIVERY=direct) signs each
//            message itself; sent with POST /emails/batch;
//   svc (SMTP submission)  the same nodes and an SMTP edge node (ROLE=smtp) fed the unsigned messages
//            by the peers' injector (STARTTLS, AUTH PLAIN with the API key); svc signs each one;
//   Postfix  Debian's package, a separate instance with the default qmgr, fed the same messages
//            signed beforehand over SMTP; routed by transport_maps (no MX look-ups: said in the table);
//   Haraka   from /tmp/haraka-bench when installed there, fed like Postfix, MX from the bench DNS;
//   Postfix + OpenDKIM  the same Postfix fed the messages unsigned, OpenDKIM (Debian's opendkim) signing
//            each one as its milter: the signing svc does, done the way a Postfix operator does it.
// Every SMTP column is injected alike: INJECT_CONNECTIONS connections, each upgraded with STARTTLS
// (the bench's one self-signed pair, bench/mta-tls.ts). Each column is timed from the first submission to the last message received (deferred ones retried
// after RETRY_SECONDS in every column). For svc a control run with all ten MX hosts fast gives the cost
// of the slow and deferring domains to the eight others (their completion time with vs without).
//
// Flags: --messages N (20000), --only svc|submission|postfix|haraka|opendkim (or several, comma-separated), --nodes 2 (after the svc
// column, the same messages through two worker nodes, and again with one of them killed mid-run:
// bench/mta-nodes.ts). Environment: DATABASE_URL (required),
// BENCH_REDIS_URL / REDIS_URL (redis://127.0.0.1:6379), BENCH_LOG_LEVEL (warn), BENCH_CPU_PROF=1,
// BENCH_SUBMISSION_ROLE=all (the submission column on one ROLE=all node, edge, API and worker in one
// process, instead of an SMTP edge node beside the worker node; not with the svc column),
// HARAKA_BENCH_DIR (/tmp/haraka-bench). Writes bench/results-mta.json (with --nodes 2:
// bench/results-mta-nodes.json, so that a two-node run leaves the peers' figures as they were).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Domain } from '../daemon/modules/domains/model.ts';
import { openDkimPrivateKey } from '../daemon/modules/domains/keys.ts';
import { loadSecrets } from '../daemon/secrets.ts';
import { startDnsServer, type TestDnsServer } from '../test/helpers/dns-server.ts';
import { BENCH_DIR, freePort, startChild } from './children.ts';
import { createBenchDatabase, SENDER_DOMAIN, type BenchDatabase } from './database.ts';
import { machineInfo } from './machine.ts';
import { resultsFile } from './results-file.ts';
import { columnFigures, SinksClient, type ColumnFigures } from './mta-figures.ts';
import { harakaInstalled, HARAKA_HOW_TO, startHaraka } from './mta-haraka.ts';
import { INJECT_CONNECTIONS, INJECT_REQUESTS, injectSmtp } from './mta-inject.ts';
import { DESTINATIONS, NORMAL_DOMAINS, presignMessages, type PresignedMessage } from './mta-message.ts';
import { opendkimInstalled, OPENDKIM_HOW_TO, startOpenDkim } from './mta-opendkim.ts';
import { postfixInstalled, startPostfix } from './mta-postfix.ts';
import { startSvcNodes, svcColumn, svcSubmissionColumn, type SvcSetup } from './mta-svc.ts';
import { nodeGoals, twoNodeColumns, type NodesFigures } from './mta-nodes.ts';
import { writeBenchTls } from './mta-tls.ts';

const { values: flags } = parseArgs({
  options: {
    messages: { type: 'string', default: '20000' },
    only: { type: 'string' },
    nodes: { type: 'string', default: '1' },
  },
});
const workerNodes = Number(flags.nodes);
if (workerNodes !== 1 && workerNodes !== 2) throw new Error(`--nodes takes 1 or 2, got "${flags.nodes}"`);
const messages = Number(flags.messages);
if (!Number.isInteger(messages) || messages < 10) throw new Error(`--messages must be a whole number ≥ 10`);
const only = flags.only ?? null;
const onlyColumns = only === null ? null : only.split(',');
const unknownColumn = onlyColumns?.find((c) => !['svc', 'submission', 'postfix', 'haraka', 'opendkim'].includes(c));
if (unknownColumn !== undefined)
  throw new Error(
    `--only takes svc, submission, postfix, haraka or opendkim (comma-separated), got "${unknownColumn}"`,
  );
const wanted = (column: string) => onlyColumns === null || onlyColumns.includes(column);

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error('npm run bench:mta needs PostgreSQL: set DATABASE_URL (a bench database is created and dropped).');
  process.exit(2);
}
const RETRY_SECONDS = 5;
const STALL_MS = 120_000;
const JWT_SECRET = 'bench-secret-bench-secret-bench-secret-0123456789';
const loadAverage = () => loadavg().map((l) => Math.round(l * 100) / 100);
const log = (message: string) => console.error(`[bench:mta ${new Date().toISOString().slice(11, 19)}] ${message}`);

const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-mta-'));
const cleanups: (() => Promise<void> | void)[] = [];

interface MtaResults {
  machine: ReturnType<typeof machineInfo> & { loadAverageAtEnd: number[] };
  settings: Record<string, unknown>;
  columns: ColumnFigures[];
  /** svc's eight normal domains with the slow and deferring MX hosts vs with all ten fast. */
  isolation: { withSlowAndDeferring: number; allFast: number; cost: number } | null;
  skipped: string[];
  goals: { goal: string; met: boolean | null; figure: string }[];
  /** --nodes 2: the two-node figures beside the one-node column (bench/mta-nodes.ts). */
  nodes?: NodesFigures | null;
}

async function startDns(): Promise<TestDnsServer> {
  const dns = await startDnsServer();
  for (const { domain, address } of DESTINATIONS) {
    dns.zone.mx.set(domain, [{ exchange: `mx.${domain}`, priority: 10 }]);
    dns.zone.a.set(`mx.${domain}`, [address]);
  }
  // The sender rules (docs/mta.md) hold direct mail whose From domain publishes no DMARC record.
  dns.zone.txt.set(`_dmarc.${SENDER_DOMAIN}`, ['v=DMARC1; p=none']);
  return dns;
}

async function smtpColumn(
  label: string,
  version: string,
  port: number,
  presigned: PresignedMessage[],
  sinks: SinksClient,
  notes: string[],
): Promise<ColumnFigures> {
  await sinks.reset();
  const loadAverageBefore = loadAverage();
  log(`${label}: ${presigned.length} presigned messages over SMTP (${INJECT_CONNECTIONS} connections)`);
  const injection = await injectSmtp(port, presigned);
  if (injection.failures) log(`  ${injection.failures} refused, the first: ${injection.firstError}`);
  log(`  accepted in ${Math.round(injection.finishedAt - injection.startedAt)} ms; waiting for the sinks`);
  const stats = await sinks.waitForUnique(presigned.length - injection.failures, STALL_MS, (s) =>
    log(`  ${s.unique} received`),
  );
  return columnFigures(label, version, injection, stats, await sinks.arrivals(), {
    cpuMsPerMessage: null,
    loadAverageBefore,
    loadAverageAfter: loadAverage(),
    notes: injection.failures ? [...notes, `${injection.failures} submissions refused`] : notes,
  });
}

/** The faster of the peers that sign (Postfix + OpenDKIM) or get signed messages (Haraka): §2's yardstick. */
function fasterSigningPeer(columns: ColumnFigures[]): ColumnFigures | null {
  const peers = columns.filter((c) => c.label === 'Postfix + OpenDKIM' || c.label === 'Haraka');
  return peers.sort((a, b) => b.messagesPerSecond - a.messagesPerSecond)[0] ?? null;
}

function markdown(results: MtaResults): string {
  const postfix = results.columns.find((c) => c.label === 'Postfix');
  const peer = fasterSigningPeer(results.columns);
  const rows = results.columns.map((c) => {
    const times = (base: ColumnFigures | null | undefined) =>
      base ? `${(c.messagesPerSecond / base.messagesPerSecond).toFixed(2)}×` : '–';
    const ratio = `${times(postfix)} | ${times(peer)}`;
    const ms = (v: number | null) => (v === null ? '–' : `${v}`);
    return `| ${c.label}${c.version ? ` ${c.version}` : ''} | ${c.messagesPerSecond} | ${ratio} | ${c.seconds} | ${c.normalDomainsSeconds} | ${ms(c.latencyP50Ms)} | ${ms(c.latencyP99Ms)} | ${Math.round(c.averageMessageBytes / 1024)} KB | ${c.signed === c.messages ? 'all' : `${c.signed} of ${c.messages}`} | ${c.loadAverageBefore[0]} → ${c.loadAverageAfter[0]} |`;
  });
  return [
    `| column | msg/s | × Postfix | × ${peer?.label ?? 'faster signing peer'} | total s | 8 normal domains s | p50 ms | p99 ms | size | DKIM-signed | load (1 min) |`,
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

async function main(): Promise<MtaResults> {
  const machine = machineInfo(null);
  log(`${machine.nproc} × ${machine.cpuModel}, load ${machine.loadAverageAtStart.join(' ')}; ${messages} messages`);
  const dns = await startDns();
  cleanups.push(() => dns.close());
  const sinksChild = await startChild('MX sinks', 'mta-sinks.ts', [JSON.stringify(DESTINATIONS)]);
  cleanups.push(() => sinksChild.stop());
  const sinks = new SinksClient(sinksChild, Number(sinksChild.readyText));
  log(`creating a bench database on ${new URL(databaseUrl!).host}`);
  const database: BenchDatabase = await createBenchDatabase(databaseUrl!, JWT_SECRET, dataDir);
  cleanups.push(() => database.drop());
  machine.postgres = database.postgresVersion;

  // One pair for every SMTP column's STARTTLS.
  const tls = writeBenchTls();
  cleanups.push(() => tls.remove());
  const columns: ColumnFigures[] = [];
  const skipped: string[] = [];
  let isolation: MtaResults['isolation'] = null;
  let nodesFigures: NodesFigures | null = null;
  const behaviours = DESTINATIONS.map((d) => d.behaviour);
  const allFast = DESTINATIONS.map(() => 'fast' as const);

  const wantSubmission = wanted('submission');
  // Unsigned for svc's submission and Postfix + OpenDKIM (signed beforehand for Postfix and Haraka).
  let unsignedMessages: PresignedMessage[] | null = null;
  const unsigned = async () => {
    if (!unsignedMessages) {
      log(`composing ${messages} messages, unsigned, for svc's submission and Postfix + OpenDKIM (not timed)`);
      unsignedMessages = await presignMessages('u', messages, null);
    }
    return unsignedMessages;
  };
  if (wanted('svc') || wantSubmission) {
    const submissionRole = process.env.BENCH_SUBMISSION_ROLE === 'all' ? 'all' : 'smtp';
    if (submissionRole === 'all' && wanted('svc'))
      throw new Error(
        'BENCH_SUBMISSION_ROLE=all runs one ROLE=all node for the submission column: add --only submission',
      );
    const setup: SvcSetup = {
      databaseUrl: database.url,
      dataDir,
      jwtSecret: JWT_SECRET,
      redisUrl: process.env.BENCH_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      dnsServer: dns.address,
      apiKey: database.apiKey,
      retryBaseMs: RETRY_SECONDS * 1000,
      logLevel: process.env.BENCH_LOG_LEVEL ?? 'warn',
      nodeArgs:
        process.env.BENCH_CPU_PROF === '1' ? ['--cpu-prof', `--cpu-prof-dir=${join(BENCH_DIR, 'profiles')}`] : [],
      submissionTls: wantSubmission ? tls : null,
      submissionRole,
      log,
    };
    const nodes = await startSvcNodes(setup);
    cleanups.push(() => nodes.stop());
    const sequelize = database.db.sequelize;
    const warmUpCount = Math.min(500, Math.ceil(messages / 10));
    if (wanted('svc')) {
      // A warm-up (not measured: JIT, pools, caches), then the control run: a database that has grown by
      // one run can only slow the measured one.
      await sinks.behave(allFast);
      await svcColumn('svc warm-up', 'w', warmUpCount, nodes, sinks, setup, sequelize, STALL_MS);
      // --nodes 2 compares nodes, not destinations: the control run is left out (no isolation figure).
      const control =
        workerNodes === 2
          ? null
          : await svcColumn('svc, all ten MX fast', 'c', messages, nodes, sinks, setup, sequelize, STALL_MS);
      await sinks.behave(behaviours);
      const svc = await svcColumn('svc', 's', messages, nodes, sinks, setup, sequelize, STALL_MS);
      columns.push(svc, ...(control ? [control] : []));
      if (workerNodes === 2) {
        const shared = await twoNodeColumns(messages, nodes, svc, sinks, setup, sequelize, STALL_MS);
        columns.push(...shared.columns);
        nodesFigures = shared.figures;
      }
      isolation = control && {
        withSlowAndDeferring: svc.normalDomainsSeconds,
        allFast: control.normalDomainsSeconds,
        cost: Math.round((svc.normalDomainsSeconds / control.normalDomainsSeconds - 1) * 1000) / 1000,
      };
    }
    if (wantSubmission) {
      // Its own warm-up (the edge's JIT and parser), on other recipients than the measured messages.
      await sinks.behave(behaviours);
      const warmUp = await presignMessages('v', warmUpCount, null);
      await svcSubmissionColumn('svc submission warm-up', warmUp, nodes, sinks, setup, sequelize, STALL_MS);
      columns.push(
        await svcSubmissionColumn('svc (SMTP submission)', await unsigned(), nodes, sinks, setup, sequelize, STALL_MS),
      );
    }
    await nodes.stop();
  }

  const wantPostfix = wanted('postfix') && postfixInstalled();
  const wantHaraka = wanted('haraka') && harakaInstalled();
  const wantOpenDkim = wanted('opendkim') && postfixInstalled() && opendkimInstalled();
  if (wanted('postfix') && !wantPostfix)
    skipped.push('Postfix: not installed (DEBIAN_FRONTEND=noninteractive apt-get install -y postfix)');
  if (wanted('haraka') && !wantHaraka) skipped.push(`Haraka: not installed (${HARAKA_HOW_TO})`);
  if (wanted('opendkim') && !wantOpenDkim)
    skipped.push(`Postfix + OpenDKIM: not installed (${OPENDKIM_HOW_TO} postfix)`);
  if (wantPostfix || wantHaraka || wantOpenDkim) {
    await sinks.behave(behaviours);
    const domain = await Domain.findOne({ where: { tenantId: database.tenantId, name: SENDER_DOMAIN } });
    const privateKey = openDkimPrivateKey(loadSecrets(dataDir, JWT_SECRET).encryptionKey, domain!.dkimPrivateKeySealed);
    const key = { domainName: SENDER_DOMAIN, keySelector: domain!.dkimSelector, privateKey };
    log(`signing ${messages} messages beforehand for Postfix and Haraka (not timed)`);
    const presigned = await presignMessages('p', messages, key);
    if (wantPostfix) {
      const postfix = startPostfix(await freePort(), RETRY_SECONDS, tls);
      try {
        columns.push(
          await smtpColumn('Postfix', postfix.version, postfix.port, presigned, sinks, [
            'transport_maps routes each domain to [127.0.0.x]:25: no MX or A look-ups (svc and Haraka make them)',
            `minimal_backoff_time = queue_run_delay = ${RETRY_SECONDS}s (svc: SEND_RETRY_BASE_MS = ${RETRY_SECONDS * 1000})`,
          ]),
        );
      } finally {
        postfix.stop();
      }
    }
    if (wantOpenDkim) {
      const opendkim = await startOpenDkim(key);
      const postfix = startPostfix(await freePort(), RETRY_SECONDS, tls, opendkim.milter);
      try {
        columns.push(
          await smtpColumn(
            'Postfix + OpenDKIM',
            `${postfix.version} + ${opendkim.version}`,
            postfix.port,
            await unsigned(),
            sinks,
            [
              'OpenDKIM signs each message as Postfix receives it (relaxed/relaxed, rsa-sha256, the same key and header fields as svc); routed like Postfix',
            ],
          ),
        );
      } finally {
        postfix.stop();
        await opendkim.stop();
      }
    }
    if (wantHaraka) {
      const haraka = await startHaraka(await freePort(), dns.address, RETRY_SECONDS, tls);
      try {
        columns.push(
          await smtpColumn('Haraka', haraka.version, haraka.port, presigned, sinks, [
            'one process (Haraka default), MX and A from the bench DNS through a get_mx plugin',
            `temp_fail_intervals = ${RETRY_SECONDS}s`,
          ]),
        );
      } finally {
        await haraka.stop();
      }
    }
  }

  const svc = columns.find((c) => c.label === 'svc');
  const postfix = columns.find((c) => c.label === 'Postfix');
  const submission = columns.find((c) => c.label === 'svc (SMTP submission)');
  const peer = fasterSigningPeer(columns);
  const goals: MtaResults['goals'] = [
    {
      goal: 'svc ≥ 1.0 × Postfix messages/s',
      met: svc && postfix ? svc.messagesPerSecond >= postfix.messagesPerSecond : null,
      figure: svc && postfix ? `${(svc.messagesPerSecond / postfix.messagesPerSecond).toFixed(2)}×` : 'not measured',
    },
    {
      goal: 'svc ≥ 278 messages/s (1,000,000/hour)',
      met: svc ? svc.messagesPerSecond >= 278 : null,
      figure: svc ? `${svc.messagesPerSecond}/s` : 'not measured',
    },
    {
      goal: 'svc over SMTP submission ≥ 2.5 × the faster of Postfix + OpenDKIM and Haraka',
      met: submission && peer ? submission.messagesPerSecond >= 2.5 * peer.messagesPerSecond : null,
      figure:
        submission && peer
          ? `${(submission.messagesPerSecond / peer.messagesPerSecond).toFixed(2)}× ${peer.label} (${submission.messagesPerSecond} / ${peer.messagesPerSecond} msg/s)`
          : 'not measured',
    },
    {
      goal: 'slow + deferring domains cost the 8 others ≤ 10 %',
      met: isolation ? isolation.cost <= 0.1 : null,
      figure: isolation ? `${(isolation.cost * 100).toFixed(1)} %` : 'not measured',
    },
  ];
  if (nodesFigures) goals.push(...nodeGoals(nodesFigures));
  return {
    nodes: nodesFigures,
    machine: { ...machine, loadAverageAtEnd: loadAverage() },
    settings: {
      messages,
      destinations: DESTINATIONS,
      normalDomains: NORMAL_DOMAINS,
      retrySeconds: RETRY_SECONDS,
      smtpInjectorConnections: INJECT_CONNECTIONS,
      apiInjectorRequestsInFlight: INJECT_REQUESTS,
      only,
      workerNodes,
      uptime: execFileSync('uptime').toString().trim(),
    },
    columns,
    isolation,
    skipped,
    goals,
  };
}

async function cleanUp(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await Promise.resolve(cleanup()).catch(() => {});
  rmSync(dataDir, { recursive: true, force: true });
}
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => void cleanUp().finally(() => process.exit(130)));

try {
  const results = await main();
  const file = resultsFile(workerNodes === 2 ? 'results-mta-nodes.json' : 'results-mta.json');
  writeFileSync(file, JSON.stringify(results, null, 2) + '\n');
  console.log(markdown(results));
  for (const skip of results.skipped) console.log(`\n${skip}`);
  for (const column of results.columns) for (const note of column.notes) console.log(`\n${column.label}: ${note}`);
  console.log('');
  for (const goal of results.goals)
    console.log(`${goal.met === null ? '–' : goal.met ? '✓' : '✗'} ${goal.goal}: ${goal.figure}`);
  console.log(`\n${results.settings.uptime}; ${file} written`);
} finally {
  await cleanUp();
}
