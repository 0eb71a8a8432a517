// `npm run bench:check`: a short run of every bench, each figure as a ratio to the baseline the bench
// measures in the same run through the same path, compared with the ratios kept in
// bench/check-baseline.json for this machine (CPU model and cores: bench/check-core.ts). Exits 1 when a
// ratio falls more than 20 % below its kept value (or a kept ratio is no longer reported), 2 on a bench
// that fails to run, 3 when nothing was kept for this machine yet.
// `npm run bench:check -- --update` writes this run's ratios as the kept ones; `--only lists,accept`
// runs some benches only; `--repeat 3` runs them three times (in turn: lists, accept, …, lists, accept, …)
// and compares (or keeps) each ratio's median; `--kept <file>` reads (and updates) another file than
// bench/check-baseline.json. Each bench runs as its own child process, in its short form (the sizes
// below), and writes its results to a temporary file (BENCH_RESULTS_FILE) instead of the one kept in
// bench/. Too noisy for CI (bench/README.md § bench:check): run it on a quiet machine, before
// resolving any change to a hot path.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { errorText } from '../daemon/errors.ts';
import { BENCH_DIR, ROOT_DIR } from './children.ts';
import { machineInfo } from './machine.ts';
import {
  compareRatios,
  failed,
  formatTable,
  machineKey,
  medianRatios,
  ratio,
  readKept,
  readKeptMachines,
  updatedKept,
  writeKept,
  type KeptFile,
  type RunRatios,
} from './check-core.ts';

export const KEPT_FILE = join(BENCH_DIR, 'check-baseline.json');

interface ShortBench {
  /** The script and its arguments, run with tsx. */
  argv: string[];
  /** The short form's sizes. */
  env: Record<string, string>;
  /** This run's ratios from the results file the bench wrote. */
  ratios(results: any): RunRatios;
}

/** `bench.name` → { value, what } for each ratio that could be computed. */
function collect(bench: string, entries: [string, number | null, string][]): RunRatios {
  const out: RunRatios = {};
  for (const [name, value, what] of entries) if (value !== null) out[`${bench}.${name}`] = { value, what };
  return out;
}

const SEARCHES = ['listPage1', 'recipientSearch', 'messageIdSearch', 'status', 'tag', 'statusInRange'] as const;

export const SHORT_BENCHES: Record<string, ShortBench> = {
  lists: {
    argv: ['bench/lists.ts'],
    env: { LISTS_CONTACTS: '20000', LISTS_SHORT: '1' },
    ratios: (r) =>
      collect('lists', [
        [
          'bulk',
          ratio(r.bulkApi?.contactsPerSecond, r.baseline?.contactsPerSecond),
          'POST /contacts/bulk contacts/s ÷ bare Fastify + multi-row INSERT',
        ],
        [
          'csv',
          ratio(r.csvImport?.contactsPerSecond, r.baseline?.contactsPerSecond),
          'CSV import contacts/s ÷ bare Fastify + multi-row INSERT',
        ],
      ]),
  },
  accept: {
    argv: ['bench/run.ts'],
    env: { BENCH_ONLY: 'accept', BENCH_DURATION: '5', BENCH_WARMUP: '500' },
    ratios: (r) =>
      collect('accept', [
        [
          'rate',
          ratio(r.accept?.svc?.requestsPerSecond, r.accept?.baselineInsert?.requestsPerSecond),
          'POST /emails/send req/s (Redis limits) ÷ Fastify + 1 INSERT',
        ],
        [
          'p99',
          ratio(r.accept?.baselineInsert?.latencyP99Ms, r.accept?.svc?.latencyP99Ms),
          'Fastify + 1 INSERT p99 ÷ POST /emails/send p99',
        ],
      ]),
  },
  drain: {
    argv: ['bench/run.ts', '--drain'],
    env: { BENCH_SENDS: '3000', BENCH_LATENCY_SECONDS: '3', BENCH_WARMUP: '0' },
    ratios: (r) =>
      collect('drain', [
        [
          'signed',
          ratio(r.drain?.svc?.messagesPerSecond, r.drain?.nodemailer?.messagesPerSecond),
          'drain msg/s ÷ pooled nodemailer, DKIM-signed',
        ],
        [
          'unsigned',
          ratio(r.drain?.svcUnsigned?.messagesPerSecond, r.drain?.nodemailerUnsigned?.messagesPerSecond),
          'drain msg/s ÷ pooled nodemailer, unsigned',
        ],
      ]),
  },
  webhooks: {
    argv: ['bench/webhooks.ts'],
    env: { BENCH_WEBHOOKS: '5000', BENCH_WEBHOOK_ROUNDS: '2' },
    ratios: (r) =>
      collect('webhooks', [
        [
          'besideSlowAndDead',
          ratio(r.tenBesideSlowAndDead?.deliveriesPerSecond, r.tenEndpoints?.deliveriesPerSecond),
          'ten endpoints beside a slow and a dead one ÷ the ten alone, deliveries/s',
        ],
      ]),
  },
  search: {
    argv: ['bench/scale.ts'],
    env: { SCALE_LOGS: '10000', SCALE_SAMPLES: '50', SCALE_BACKLOG: '10000', ACCEPT_SECONDS: '2' },
    ratios: (r) =>
      collect('search', [
        ...SEARCHES.map((name): [string, number | null, string] => [
          name,
          ratio(r.milliseconds?.logDetail?.p50, r.milliseconds?.[name]?.p50),
          `log detail p50 (a primary-key read over HTTP) ÷ ${name} p50`,
        ]),
        [
          'acceptWithHistory',
          ratio(r.acceptPerSecond?.withHistory, r.acceptPerSecond?.emptyDatabase),
          'accept req/s with the history ÷ on the empty database',
        ],
      ]),
  },
  boot: {
    argv: ['bench/boot.ts'],
    env: { BENCH_BOOT_RUNS: '2', BENCH_BOOT_IDLE_MS: '500' },
    ratios: (r) =>
      collect('boot', [
        [
          'postgresRestart',
          ratio(r.summary?.bareFastify?.medianReadyMs, r.summary?.postgresRestart?.medianReadyMs),
          'bare Node + Fastify spawn → first 200 ÷ svc restart on PostgreSQL, same spawn and probe',
        ],
      ]),
  },
  mta: {
    argv: ['bench/mta.ts', '--messages', '2000'],
    env: {},
    ratios: (r) => {
      const rate = (label: string) =>
        (r.columns as { label: string; messagesPerSecond: number }[] | undefined)?.find((c) => c.label === label)
          ?.messagesPerSecond;
      return collect('mta', [
        ['postfix', ratio(rate('svc'), rate('Postfix')), 'svc msg/s (batch API) ÷ Postfix, same MX sinks'],
        ['postfixOpendkim', ratio(rate('svc'), rate('Postfix + OpenDKIM')), 'svc msg/s ÷ Postfix + OpenDKIM'],
        ['haraka', ratio(rate('svc'), rate('Haraka')), 'svc msg/s ÷ Haraka'],
      ]);
    },
  },
  inbound: {
    argv: ['bench/inbound.ts'],
    env: { BENCH_INBOUND_MESSAGES: '600' },
    ratios: (r) =>
      collect('inbound', [
        [
          'smtpServerMailparser',
          ratio(r.svc?.perSecond, r.baseline?.perSecond),
          'inbound → webhook delivered msg/s ÷ bare smtp-server + mailparser, same injector',
        ],
      ]),
  },
};

const log = (message: string) => console.error(`[bench:check ${new Date().toISOString().slice(11, 19)}] ${message}`);

/** Runs one bench in its short form; its results, or the reason it failed. */
async function runShort(name: string, bench: ShortBench, dir: string): Promise<unknown> {
  const file = join(dir, `${name}.json`);
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', ...bench.argv], {
    cwd: ROOT_DIR,
    env: { ...process.env, ...bench.env, BENCH_RESULTS_FILE: file },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let tail = '';
  child.stderr!.on('data', (chunk: Buffer) => (tail = (tail + chunk.toString()).slice(-4000)));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  if (code !== 0 || !existsSync(file)) throw new Error(`${name} exited with ${code} after ${seconds} s:\n${tail}`);
  log(`${name}: done in ${seconds} s`);
  return JSON.parse(readFileSync(file, 'utf8'));
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      update: { type: 'boolean' },
      only: { type: 'string' },
      kept: { type: 'string' },
      repeat: { type: 'string', default: '1' },
    },
  });
  const repeat = Number(values.repeat);
  if (!Number.isInteger(repeat) || repeat < 1 || repeat > 9) {
    console.error(`--repeat takes a whole number from 1 to 9, got "${values.repeat}"`);
    return 2;
  }
  const keptFile = values.kept ?? KEPT_FILE;
  const names = values.only ? values.only.split(',').map((n) => n.trim()) : Object.keys(SHORT_BENCHES);
  const unknown = names.filter((n) => !(n in SHORT_BENCHES));
  if (unknown.length) {
    console.error(`--only: no bench named ${unknown.join(', ')} (${Object.keys(SHORT_BENCHES).join(', ')})`);
    return 2;
  }
  if (!process.env.DATABASE_URL) {
    console.error('bench:check needs DATABASE_URL (a PostgreSQL server where the benches may create databases).');
    return 2;
  }
  const load = loadavg()[0];
  if (load >= 3) log(`load average ${load.toFixed(1)}: the ratios of a loaded machine are noise (see bench/README.md)`);
  const machine: Record<string, unknown> = { ...machineInfo(null) };
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-check-'));
  const runs: RunRatios[] = [];
  let broken = false;
  try {
    for (let round = 1; round <= repeat; round++) {
      const run: RunRatios = {};
      for (const name of names) {
        const which = repeat > 1 ? ` (round ${round} of ${repeat})` : '';
        log(`${name}${which}: ${[...SHORT_BENCHES[name].argv].join(' ')} ${JSON.stringify(SHORT_BENCHES[name].env)}`);
        try {
          Object.assign(run, SHORT_BENCHES[name].ratios(await runShort(name, SHORT_BENCHES[name], dir)));
        } catch (error) {
          broken = true;
          log(errorText(error));
        }
      }
      if (repeat > 1)
        log(`round ${round}: ${JSON.stringify(Object.fromEntries(Object.entries(run).map(([n, r]) => [n, r.value])))}`);
      runs.push(run);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const run = medianRatios(runs);
  machine.loadAverageAtEnd = loadavg().map((l) => Math.round(l * 100) / 100);
  if (repeat > 1) machine.runs = repeat;
  const key = machineKey(machine);
  const kept: KeptFile | null = existsSync(keptFile) ? readKept(keptFile, key) : null;
  const rows = compareRatios(kept ?? { measuredAt: '', machine: {}, tolerance: 0.2, ratios: {} }, run, new Set(names));
  console.log(formatTable(rows));
  if (kept) console.log(`kept for ${key}: ${kept.measuredAt || 'never measured'} ${JSON.stringify(kept.machine)}`);
  if (values.update) {
    if (broken) {
      log('not updating: a bench failed to run');
      return 2;
    }
    writeKept(keptFile, key, updatedKept(kept, run, machine));
    log(`wrote ${keptFile} (${key})`);
    return 0;
  }
  if (!kept || Object.keys(kept.ratios).length === 0) {
    const others = existsSync(keptFile) ? Object.keys(readKeptMachines(keptFile)) : [];
    log(
      `no kept ratios for this machine (${key}) in ${keptFile}${others.length ? ` (kept for: ${others.join('; ')})` : ''}: ` +
        `nothing to compare against. Keep a quiet run's with --update --repeat 3, and commit it.`,
    );
    return 3;
  }
  if (broken) return 2;
  const bad = failed(rows);
  if (bad.length) {
    log(
      `${bad.length} ratio(s) more than ${((kept?.tolerance ?? 0.2) * 100).toFixed(0)} % below the kept value or missing: ${bad.map((r) => r.name).join(', ')}`,
    );
    return 1;
  }
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = await main();
