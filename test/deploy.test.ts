// What the systemd unit asks of a node: the daemon starts from a read-only code directory (the unit's
// ProtectSystem=strict) with the build made at install or into DATA_DIR, boots without a warning,
// and deploy/svc.env.example means the same to systemd and to a shell.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { getEventListeners } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestDatabase } from './helpers/context.ts';
import { cleanEnv, killDaemonProcesses, startDaemonProcess, waitForReady } from './helpers/daemon-process.ts';
import { sleep } from '../daemon/jobs/thread.ts';
import { MAINTENANCE_TASKS } from '../daemon/jobs/handlers.ts';
import { DAEMON_START_FLAGS } from '../daemon/start.mjs';
import { waitFor } from './helpers/wait.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const ENV_EXAMPLE = join(REPO, 'deploy/svc.env.example');
const dir = mkdtempSync(join(tmpdir(), 'svc-deploy-'));

test.after(() => {
  killDaemonProcesses();
  rmSync(dir, { recursive: true, force: true });
});

/** What systemd's EnvironmentFile= makes of the file: one NAME=value per line, # comments. */
function environmentFileVariables(text: string): Record<string, string> {
  const lines = text.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'));
  return Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
}

test('deploy/svc.env.example: a shell (env $(grep -v ^# file)) reads the same variables as systemd; ROLE names every role', () => {
  const text = readFileSync(ENV_EXAMPLE, 'utf8');
  // The shell splits words and expands globs: any space, quote or glob in a value changes what it gets.
  const printed = execFileSync('sh', ['-c', 'env -i $(grep -v "^#" "$0") /usr/bin/env', ENV_EXAMPLE], {
    encoding: 'utf8',
  });
  const fromShell = Object.fromEntries(
    printed
      .trim()
      .split('\n')
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  const fromSystemd = environmentFileVariables(text);
  assert.equal(fromShell, fromSystemd);
  assert.ok(Object.keys(fromSystemd).length >= 10, 'the example sets the variables of a node');
  for (const line of text.split('\n').filter((line) => line && !line.startsWith('#')))
    assert.match(line, /^[A-Z][A-Z0-9_]*=[^\s'"#*?[\]]+$/, `a plain NAME=value line: ${line}`);

  const config = readFileSync(join(REPO, 'daemon/config.ts'), 'utf8');
  for (const name of Object.keys(fromSystemd)) assert.ok(config.includes(`'${name}'`), `config.ts reads ${name}`);

  const roleComment = text.split('\n')[text.split('\n').indexOf(`ROLE=${fromSystemd.ROLE}`) - 1];
  for (const role of DAEMON_START_FLAGS.role.options) assert.match(roleComment, new RegExp(`\\b${role}\\b`), role);
});

test('sleep: many concurrent sleeps on one signal hold one abort listener, and all wake on abort', async () => {
  const stop = new AbortController();
  const sleeping = Array.from({ length: 25 }, () => sleep(60_000, stop.signal));
  assert.is(getEventListeners(stop.signal, 'abort').length, 1);
  await Promise.all(Array.from({ length: 25 }, () => sleep(1, stop.signal)));
  assert.is(getEventListeners(stop.signal, 'abort').length, 1, 'finished sleeps leave nothing behind');
  stop.abort();
  await Promise.all(sleeping);
  await sleep(60_000, stop.signal); // already aborted: at once
});

/** A copy of the code as an install lays it out (/opt/svc): sources, bin, package.json, node_modules. */
function installCopy(name: string): string {
  const code = join(dir, name);
  for (const part of ['bin', 'cli', 'daemon', 'shared', 'migrations', 'package.json'])
    cpSync(join(REPO, part), join(code, part), { recursive: true });
  symlinkSync(realpathSync(join(REPO, 'node_modules')), join(code, 'node_modules'), 'dir');
  return code;
}

/** Runs the command in a mount namespace where `code` is mounted read-only, as ProtectSystem=strict does. */
const readOnly = (code: string) => (command: string[]) => [
  'unshare',
  '--mount',
  'sh',
  '-c',
  'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" "$0" && exec "$@"',
  code,
  ...command,
];

test('from a read-only code directory without a build: builds into DATA_DIR, boots with no warning, SIGTERM exits 0', async () => {
  const code = installCopy('no-build');
  const database = await createTestDatabase();
  try {
    const daemon = await startDaemonProcess(
      {
        DATA_DIR: database.dataDir,
        LOG_LEVEL: 'debug',
        ...(database.url ? { DATABASE_URL: database.url } : {}),
      },
      [],
      { bin: join(code, 'bin/svc.js'), wrap: readOnly(code) },
    );
    await waitForReady(daemon);
    // Every maintenance task has run once and gone to sleep on the shutdown signal: the moment the
    // 11th abort listener used to print MaxListenersExceededWarning.
    const tasks = ['reclaim-expired-leases', ...MAINTENANCE_TASKS.map((task) => task.name)];
    await waitFor(
      'every maintenance task to run once',
      () => tasks.every((task) => daemon.output().includes(`"task":"${task}"`)),
      { timeoutMs: 60_000 },
    );
    daemon.child.kill('SIGTERM');
    assert.is(await daemon.exit, 0, daemon.output());
    assert.not.match(daemon.output(), /Warning:/, 'no warning on a clean boot');
    assert.not.ok(existsSync(join(code, '.build')), 'nothing written in the code directory');
    const builds = readdirSync(join(database.dataDir, 'build'));
    assert.equal(builds.length, 1, builds.join(', '));
    assert.ok(existsSync(join(database.dataDir, 'build', builds[0], '.complete')));
  } finally {
    await database.drop();
  }
});

let builtInstall: string | null = null;
/**
 * An install copy after `npm run build` (the daemon's build, the CLI's, the embedded template: ~8 s of CPU), made
 * once for the tests that run from it; nothing writes in it afterwards (they mount it read-only).
 */
function installCopyBuilt(): string {
  if (builtInstall) return builtInstall;
  const code = installCopy('built');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: code, env: cleanEnv() as NodeJS.ProcessEnv });
  builtInstall = code;
  return code;
}

test('`npm run build` at install: the daemon runs that build from the read-only code directory, DATA_DIR stays clean', async () => {
  const code = installCopyBuilt();
  // The daemon's build, and the CLI's in its own directory.
  assert.equal(readdirSync(join(code, '.build')).length, 2);
  assert.is(readdirSync(join(code, '.build', 'cli')).length, 1);
  // Migrated already: what is under test is which build runs, not the first migration (the test above boots on
  // an empty database).
  const database = await createTestDatabase({ migrated: true });
  try {
    const daemon = await startDaemonProcess(
      { DATA_DIR: database.dataDir, ...(database.url ? { DATABASE_URL: database.url } : {}) },
      ['--role', 'api'],
      { bin: join(code, 'bin/svc.js'), wrap: readOnly(code) },
    );
    await waitForReady(daemon);
    daemon.child.kill('SIGTERM');
    assert.is(await daemon.exit, 0, daemon.output());
    assert.not.ok(existsSync(join(database.dataDir, 'build')), 'the install build was used');
  } finally {
    await database.drop();
  }
});

test('a read-only code directory with neither a build nor DATA_DIR: exit 78 with what to do', async () => {
  const code = installCopy('nowhere');
  const failed = await startDaemonProcess({ DATA_DIR: '' }, [], {
    bin: join(code, 'bin/svc.js'),
    wrap: readOnly(code),
  }).catch((error: Error) => error.message);
  assert.match(String(failed), /exited with 78/);
  assert.match(
    String(failed),
    /is read-only and holds no build of these sources: run `npm run build` there at install/,
  );
});

/** `svc …` with its own cache directory, run as the wrapper says (a read-only mount). */
function runSvcIn(code: string, args: string[], cacheHome: string): string {
  const [command, ...rest] = readOnly(code)([process.execPath, join(code, 'bin/svc.js'), ...args]);
  return execFileSync(command, rest, {
    env: { ...cleanEnv(), XDG_CACHE_HOME: cacheHome } as NodeJS.ProcessEnv,
  }).toString();
}

test('svc on a read-only install: runs the build `npm run build` made, else builds into the cache directory', async () => {
  const built = installCopyBuilt();
  const unusedCache = join(dir, 'cache-unused');
  assert.match(runSvcIn(built, ['--version'], unusedCache), /^svc-email\/\d+\.\d+\.\d+ /);
  assert.not.ok(existsSync(unusedCache), 'the install build was used');

  const bare = installCopy('cli-bare');
  const cache = join(dir, 'cache');
  assert.match(runSvcIn(bare, ['daemon', 'start', '--help'], cache), /USAGE\n {2}\$ svc daemon start/);
  assert.not.ok(existsSync(join(bare, '.build')), 'nothing written in the code directory');
  const builds = readdirSync(join(cache, 'svc', 'cli-build'));
  assert.equal(builds.length, 1, builds.join(', '));
  assert.ok(existsSync(join(cache, 'svc', 'cli-build', builds[0], '.complete')));
});

test.run();
