// `svc daemon start` (and so `npm start`): the daemon process itself. bin/svc.js comes here directly,
// without the CLI framework or the TypeScript loader, so the running daemon carries neither (they
// cost ≈ 80 MB of resident memory for nothing): the flags are read with node:util, the daemon runs
// from its compiled build (build.mjs). `svc daemon start --help` still goes through the CLI.
// Plain JavaScript because it runs before anything can load TypeScript.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ensureDaemonBuild, NoWritableBuildDirError } from './build.mjs';

/** Each flag of `svc daemon start` and the variable it sets (a flag wins over its variable). */
export const DAEMON_START_FLAGS = {
  port: { env: 'PORT', description: 'port to listen on' },
  host: { env: 'HOST', description: 'address to listen on' },
  role: {
    env: 'ROLE',
    description: 'run the API, the workers, the SMTP edge, or all of them',
    options: ['api', 'worker', 'smtp', 'all'],
  },
  'data-dir': { env: 'DATA_DIR', description: 'where the embedded database, captured mail and secrets live' },
  'database-url': { env: 'DATABASE_URL', description: 'PostgreSQL connection string' },
  'redis-url': { env: 'REDIS_URL', description: 'Redis connection string' },
  'smtp-url': { env: 'SMTP_URL', description: 'default SMTP relay, e.g. smtp://user:pass@host:587' },
};

const EXIT_USAGE = 2;
const EXIT_CONFIG = 78;

/** @param {string} message @param {number} code */
function fail(message, code) {
  process.stderr.write(` ›   Error: ${message}\n`);
  process.exit(code);
}

/** @param {string[]} argv the arguments after `daemon start` */
export async function startDaemonProcess(argv) {
  /** @type {Record<string, string | undefined>} */
  let values;
  try {
    const options = Object.fromEntries(
      Object.keys(DAEMON_START_FLAGS).map((name) => [name, { type: /** @type {const} */ ('string') }]),
    );
    ({ values } = parseArgs({ args: argv, options, strict: true, allowPositionals: false }));
  } catch (error) {
    fail(
      `${error instanceof Error ? error.message : String(error)}\nSee more help with \`svc daemon start --help\``,
      EXIT_USAGE,
    );
    return;
  }
  const env = { ...process.env };
  for (const [name, flag] of Object.entries(DAEMON_START_FLAGS)) {
    const value = values[name];
    if (value === undefined) continue;
    if ('options' in flag && !flag.options.includes(value))
      fail(`Expected --${name}=${value} to be one of: ${flag.options.join(', ')}`, EXIT_USAGE);
    env[flag.env] = value;
  }
  // DATA_DIR is where a read-only install builds when it has no build of its own (build.mjs). Its
  // default lives in config.ts, inside the build: an unset DATA_DIR only means "no fallback".
  let build;
  try {
    build = await ensureDaemonBuild({ dataDir: env.DATA_DIR?.trim() || null });
  } catch (error) {
    if (error instanceof NoWritableBuildDirError) fail(error.message, EXIT_CONFIG);
    throw error;
  }
  // main.js is a bundle (build.mjs) with config.ts inside: its ConfigError is the one runDaemon throws.
  const { loadConfig, ConfigError, runDaemon } = await import(pathToFileURL(join(build, 'daemon/main.js')).href);
  let config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) fail(`Configuration: ${error.message}`, EXIT_CONFIG);
    throw error;
  }
  try {
    await runDaemon(config);
  } catch (error) {
    if (error instanceof ConfigError) fail(`Configuration: ${error.message}`, EXIT_CONFIG);
    fail(error instanceof Error ? error.message : String(error), 1);
  }
}
