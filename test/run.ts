// Runs every test/**/*.test.ts file in its own process (each gets its own database), three at a time
// (TEST_CONCURRENCY), and ends with the one line CI reads: "N passed, N failed".
//
// Three on a 2-core machine: the files' processes (each test, its daemons, Chromium) use ~900 s of CPU in a
// full run and PostgreSQL ~200 s, while two at a time took 1,193 s on a quiet machine: the cores were ~45 %
// busy, most files waiting on daemons booting, leases, timers and the database. A full run three at a time on
// a machine already loaded by a benchmark (load average ~16 throughout) failed one file only, on a race in
// startWorkers since fixed (2026-11-29). TEST_CONCURRENCY=2 is the slower, calmer way.
//
// Files start longest first, by the durations of a full run kept in test/durations.json (only their order
// is used; files it does not know start first): run alphabetically, a 2-minute file drawn last kept one lane busy while
// the other had finished. `TEST_RECORD_DURATIONS=1 npm test` rewrites that file from the run.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = new URL('..', import.meta.url).pathname;
// A slow machine ran cli-sending in 350 s (it spawns `svc` dozens of times): 8 minutes keeps a margin.
const FILE_TIMEOUT_MS = 8 * 60_000;
const CONCURRENCY = Number(process.env.TEST_CONCURRENCY ?? 3);

function findTests(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'helpers' || name === 'fixtures' ? [] : findTests(path);
    return name.endsWith('.test.ts') || name.endsWith('.test.tsx') ? [path] : [];
  });
}

interface FileResult {
  file: string;
  passed: number;
  failed: number;
  skipped: number;
  output: string;
  code: number | null;
}

function runFile(file: string): Promise<FileResult> {
  return new Promise((resolve) => {
    // tsx's ESM loader alone: the sources and tests are ES modules, and tsx's CommonJS hook (which `--import tsx`
    // adds) cost each file ~0.6 s of CPU, in every require of the packages, for nothing.
    const child = spawn(process.execPath, ['--import', 'tsx/esm', file], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', NODE_ENV: 'test' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => {
      output += `\n[runner] ${relative(ROOT, file)} did not finish within ${FILE_TIMEOUT_MS / 1000} s and was killed.\n`;
      child.kill('SIGKILL');
    }, FILE_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      const number = (label: string) =>
        [...output.matchAll(new RegExp(`${label}:\\s+(\\d+)`, 'g'))].reduce((sum, m) => sum + Number(m[1]), 0);
      const total = number('Total');
      let passed = number('Passed');
      const skipped = number('Skipped');
      let failed = total - passed - skipped;
      // A file that crashed before uvu summed up, or exited non-zero, has failed at least once.
      if ((code !== 0 || total === 0) && failed === 0) failed = 1;
      if (total === 0) passed = 0;
      resolve({ file, passed, failed, skipped, output, code });
    });
  });
}

const DURATIONS_FILE = join(ROOT, 'test', 'durations.json');
const knownSeconds: Record<string, number> = existsSync(DURATIONS_FILE)
  ? JSON.parse(readFileSync(DURATIONS_FILE, 'utf8'))
  : {};
const expectedSeconds = (file: string) => knownSeconds[relative(ROOT, file)] ?? Infinity;

const only = process.argv.slice(2);
const files = findTests(join(ROOT, 'test'))
  .filter((file) => only.length === 0 || only.some((pattern) => relative(ROOT, file).includes(pattern)))
  .sort()
  .sort((a, b) => expectedSeconds(b) - expectedSeconds(a));
const results: FileResult[] = [];
const seconds: Record<string, number> = {};
let next = 0;
async function lane(): Promise<void> {
  while (next < files.length) {
    const file = files[next++];
    const started = Date.now();
    const result = await runFile(file);
    results.push(result);
    seconds[relative(ROOT, file)] = Math.round((Date.now() - started) / 100) / 10;
    const mark = result.failed > 0 ? 'FAIL' : 'ok  ';
    process.stdout.write(
      `${mark} ${relative(ROOT, file)}  ${result.passed} passed, ${result.failed} failed (${((Date.now() - started) / 1000).toFixed(1)} s)\n`,
    );
    if (result.failed > 0 || process.env.TEST_VERBOSE)
      process.stdout.write(result.output.replace(/^/gm, '    ') + '\n');
  }
}
await Promise.all(Array.from({ length: Math.min(CONCURRENCY, files.length) }, lane));
const passed = results.reduce((sum, r) => sum + r.passed, 0);
const failed = results.reduce((sum, r) => sum + r.failed, 0);
const skipped = results.reduce((sum, r) => sum + r.skipped, 0);
process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
process.exitCode = failed > 0 || files.length === 0 ? 1 : 0;
if (process.env.TEST_RECORD_DURATIONS && only.length === 0) {
  const sorted = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(DURATIONS_FILE, JSON.stringify(sorted, null, 2) + '\n');
}
