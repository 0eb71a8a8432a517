// The daemon runs compiled JavaScript, not TypeScript transpiled at load time: tsx in every worker
// thread held its compiler, transpiled modules and source maps once per thread (idle RSS 707 MB on
// PostgreSQL with four threads; see the README's footprint figures). `svc daemon start` (and so
// `npm start`) calls ensureDaemonBuild(), which transpiles daemon/, shared/ and migrations/ with
// esbuild (well under a second) into .build/<hash of the sources>/ when that build is missing; the
// hash covers every source's path, size and mtime, so an edited file means a new build and a stale
// one is never run. Builds are written to a temporary directory and renamed into place, so daemons
// booting together (tests, several nodes on one disk) never see half a build.
//
// An installed node builds once at install (`npm run build`, which runs this file), because its code
// directory is read-only at run time (the systemd unit's ProtectSystem=strict). When that build is
// missing or stale (an upgrade that skipped `npm run build`) and the code directory cannot be
// written, the build goes to DATA_DIR/build/ instead, so neither a first start nor an upgrade needs
// a writable code directory.
//
// Every file is transpiled on its own (migrations and the render sandbox are loaded by path), and the
// entry points the daemon actually runs (main.ts and each worker thread's module) are then bundled
// over their own output: one file with the daemon's sources and most packages in it, so a boot, and
// each worker thread, no longer resolves, reads and compiles ≈ 1,700 modules one by one (1.4 s of a
// 5.4 s restart went to that in the main thread, and again in each thread; docs/boot.md).
// The build machinery (hashing, the atomic rename, the fallback directory) is shared with the CLI's
// build: shared/build-cache.mjs. Plain JavaScript (with JSDoc types) because it runs before anything can
// load TypeScript.
import { dirname, join } from 'node:path';
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  bundleForBuild,
  ensureBuild,
  NoWritableBuildDirError,
  REPO_ROOT,
  rewriteRelativeSpecifiers,
  transpileEach,
} from '../shared/build-cache.mjs';

export { NoWritableBuildDirError, REPO_ROOT, rewriteRelativeSpecifiers };
export const BUILD_ROOT = join(REPO_ROOT, '.build');

/** @param {string[]} files @param {string} outdir */
async function compile(files, outdir) {
  await transpileEach(files, outdir);
  // One esbuild run per directory of entries: the entries of a run share its parse of every input
  // (the seven worker modules are one run), and their own URLs are the same relative to each.
  const directories = [...new Set(BUNDLED_ENTRIES.map((entry) => dirname(entry)))];
  await Promise.all(
    directories.map((directory) =>
      bundleForBuild({
        entryPoints: BUNDLED_ENTRIES.filter((entry) => dirname(entry) === directory).map((entry) =>
          join(REPO_ROOT, entry),
        ),
        outdir,
        bundleDir: join(outdir, directory),
        external: UNBUNDLED_PACKAGES,
      }),
    ),
  );
}

/**
 * The modules the daemon runs as entry points: the process's own, and each worker thread's (Bree
 * and the inbound reader start threads on jobs/bootstrap.mjs, which imports one of these by path).
 */
export const BUNDLED_ENTRIES = [
  'daemon/main.ts',
  'daemon/jobs/send-worker.ts',
  'daemon/jobs/mta-worker.ts',
  'daemon/jobs/background.ts',
  'daemon/jobs/scheduler.ts',
  'daemon/jobs/webhook-worker.ts',
  'daemon/jobs/system-mail-worker.ts',
  'daemon/jobs/maintenance.ts',
  'daemon/jobs/campaign-worker.ts',
  'daemon/modules/inbound-mail/reader-thread.ts',
];

/**
 * Packages left out of the bundles, loaded from node_modules when imported: those that find files
 * beside their own code (PGlite's WASM, esbuild's binary), optional ones
 * that are not installed (pg-native, pg-hstore), and big ones the daemon imports only when it needs
 * them (mail parsing, DKIM checks of ARF reports, the migration runner, the React Email sandbox), so
 * that a boot does not even read them. (pino is bundled: only its transports, which the daemon does not
 * use, look for files of their own.)
 */
export const UNBUNDLED_PACKAGES = [
  '@electric-sql/pglite',
  'esbuild',
  'mailparser',
  'mailauth',
  'umzug',
  'pg-hstore',
  'pg-native',
  'react',
  'react-dom',
  '@react-email/*',
];

/** @param {string} dataDir */
export function dataDirBuildRoot(dataDir) {
  return join(dataDir, 'build');
}

/** @type {import('../shared/build-cache.mjs').BuildRecipe} */
const DAEMON_BUILD = {
  sourceDirs: ['daemon', 'shared', 'migrations'],
  format: '2',
  root: BUILD_ROOT,
  compile,
  readOnlyMessage: `${REPO_ROOT} is read-only and holds no build of these sources: run \`npm run build\` there at install (and after each upgrade), or set DATA_DIR to a writable directory for the daemon to build into.`,
};

/**
 * The directory of the current build (created when missing); its layout mirrors the repo's. It is
 * looked for under the code directory, then under DATA_DIR/build when `dataDir` is given, and made
 * in the first of those that can be written.
 * @param {{ dataDir?: string | null }} [options]
 * @returns {Promise<string>}
 */
export function ensureDaemonBuild(options = {}) {
  return ensureBuild(DAEMON_BUILD, options.dataDir ? dataDirBuildRoot(options.dataDir) : null);
}

/**
 * The embedded database's template in the build `target` (daemon/db/embedded-template.ts), made when
 * missing: a new DATA_DIR then starts from it instead of running initdb and every migration.
 * @param {string} target
 */
export async function ensureEmbeddedTemplate(target) {
  const path = join(target, 'embedded-template');
  if (existsSync(path)) return path;
  const { makeEmbeddedTemplate } = await import(pathToFileURL(join(target, 'daemon/db/embedded-template.js')).href);
  return makeEmbeddedTemplate(path);
}

// `npm run build` (at install, npm's "prepare"): build now, so the daemon finds the build in its
// read-only code directory, and the embedded database's template with it.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const target = await ensureDaemonBuild();
  process.stdout.write(`daemon built into ${target}\n`);
  const started = performance.now();
  const template = await ensureEmbeddedTemplate(target);
  process.stdout.write(`embedded database template: ${template} (${Math.round(performance.now() - started)} ms)\n`);
}
