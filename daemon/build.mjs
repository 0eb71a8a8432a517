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
// Plain JavaScript (with JSDoc types) because it runs before anything can load TypeScript.
import { createHash, randomBytes } from 'node:crypto';
import {
  accessSync,
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const BUILD_ROOT = join(REPO_ROOT, '.build');
const SOURCE_DIRS = ['daemon', 'shared', 'migrations'];
const COMPLETE_MARKER = '.complete';
/** Bumped when the build itself changes shape (keeps old builds from being reused). */
const BUILD_FORMAT = '2';

/** @returns {string[]} */
function sourceFiles() {
  /** @type {(dir: string) => string[]} */
  const walk = (dir) =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return walk(path);
      return /\.(ts|tsx|mjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
    });
  return SOURCE_DIRS.flatMap((dir) => walk(join(REPO_ROOT, dir))).sort();
}

/**
 * The bundles carry the packages' code too: what npm installed is part of a build's sources (an
 * upgrade of a package must not keep running the old copy inside an old bundle).
 */
const INSTALLED_PACKAGES_FILES = ['package.json', 'package-lock.json', 'node_modules/.package-lock.json'];

/** @param {string[]} files */
function sourcesHash(files) {
  const hash = createHash('sha256').update(BUILD_FORMAT);
  const installed = INSTALLED_PACKAGES_FILES.map((file) => join(REPO_ROOT, file)).filter((file) => existsSync(file));
  for (const file of [...files, ...installed]) {
    const stats = statSync(file);
    hash.update(`${relative(REPO_ROOT, file)}\0${stats.size}\0${stats.mtimeMs}\n`);
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * Relative specifiers name the .ts sources (`import … from './x.ts'`, worker paths such as
 * here('./send-worker.ts')); in the build they name the .js files next to them.
 */
/** @param {string} code */
export function rewriteRelativeSpecifiers(code) {
  return code.replace(/(["'`])(\.{1,2}\/[^"'`\s]+?)\.tsx?\1/g, '$1$2.js$1');
}

/** @param {string[]} files @param {string} outdir */
async function compile(files, outdir) {
  const { build } = await import('esbuild');
  const typescript = files.filter((file) => /\.tsx?$/.test(file));
  await build({
    entryPoints: typescript,
    outdir,
    outbase: REPO_ROOT,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    jsx: 'automatic',
    logLevel: 'silent',
    write: true,
  });
  for (const file of typescript) {
    const output = join(outdir, relative(REPO_ROOT, file)).replace(/\.tsx?$/, '.js');
    writeFileSync(output, rewriteRelativeSpecifiers(readFileSync(output, 'utf8')));
  }
  for (const file of files.filter((file) => file.endsWith('.mjs'))) {
    const output = join(outdir, relative(REPO_ROOT, file));
    mkdirSync(dirname(output), { recursive: true });
    copyFileSync(file, output);
  }
  // One esbuild run per directory of entries: the entries of a run share its parse of every input
  // (the seven worker modules are one run), and their own URLs are the same relative to each.
  const directories = [...new Set(BUNDLED_ENTRIES.map((entry) => dirname(entry)))];
  await Promise.all(
    directories.map((directory) =>
      bundleEntries(
        BUNDLED_ENTRIES.filter((entry) => dirname(entry) === directory),
        directory,
        outdir,
      ),
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

/** A bundle runs CommonJS packages inside an ES module: they get a `require` of their own. */
const BUNDLE_BANNER =
  "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);";

/**
 * Bundles `entries` (all in `directory`) over their transpiled files in `outdir`. Code that finds
 * files relative to its own module (`new URL('./x.ts', import.meta.url)`: worker files, the
 * migrations directory) gets the URL its source file has in the build rather than the bundle's, so
 * those files are found where they were.
 * @param {string[]} entries @param {string} directory @param {string} outdir
 */
async function bundleEntries(entries, directory, outdir) {
  const { build } = await import('esbuild');
  const bundleDir = join(outdir, directory);
  /** @type {import('esbuild').Plugin} */
  const ownUrls = {
    name: 'source-import-meta-url',
    setup(plugin) {
      plugin.onLoad({ filter: /\.tsx?$/ }, (args) => {
        if (args.path.includes('/node_modules/')) return undefined;
        const source = readFileSync(args.path, 'utf8');
        if (!source.includes('import.meta.url')) return undefined;
        const built = join(outdir, relative(REPO_ROOT, args.path)).replace(/\.tsx?$/, '.js');
        const fromBundle = relative(bundleDir, built);
        const url = `new URL(${JSON.stringify(fromBundle.startsWith('.') ? fromBundle : `./${fromBundle}`)}, import.meta.url).href`;
        return {
          contents: rewriteRelativeSpecifiers(source.replaceAll('import.meta.url', url)),
          loader: args.path.endsWith('.tsx') ? 'tsx' : 'ts',
          resolveDir: dirname(args.path),
        };
      });
    },
  };
  await build({
    entryPoints: entries.map((entry) => join(REPO_ROOT, entry)),
    outdir: bundleDir,
    entryNames: '[name]',
    allowOverwrite: true,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    jsx: 'automatic',
    external: UNBUNDLED_PACKAGES,
    banner: { js: BUNDLE_BANNER },
    plugins: [ownUrls],
    logLevel: 'silent',
  });
}

/** Errors that mean "this directory cannot be written" (a read-only mount, or no permission). */
const READ_ONLY_ERRORS = new Set(['EROFS', 'EACCES', 'EPERM']);

/** @param {unknown} error */
function isReadOnlyError(error) {
  return READ_ONLY_ERRORS.has(/** @type {NodeJS.ErrnoException} */ (error)?.code ?? '');
}

/** No build of these sources exists and none can be written: an installation problem, not a crash. */
export class NoWritableBuildDirError extends Error {}

/** @param {string} dataDir */
export function dataDirBuildRoot(dataDir) {
  return join(dataDir, 'build');
}

/**
 * Compiles into `root`/`hash`. A build outside the code directory gets what module resolution finds
 * beside the code: package.json's "type": "module" and a link to its node_modules.
 * @param {string[]} files @param {string} root @param {string} hash
 */
async function buildInto(files, root, hash) {
  const target = join(root, hash);
  mkdirSync(root, { recursive: true });
  const scratch = join(root, `tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await compile(files, scratch);
    if (root !== BUILD_ROOT) {
      writeFileSync(join(scratch, 'package.json'), '{ "type": "module" }\n');
      symlinkSync(join(REPO_ROOT, 'node_modules'), join(scratch, 'node_modules'), 'dir');
    }
    writeFileSync(join(scratch, COMPLETE_MARKER), new Date().toISOString());
    try {
      renameSync(scratch, target);
    } catch (error) {
      // Another process finished the same build first: theirs is identical.
      if (!existsSync(join(target, COMPLETE_MARKER))) throw error;
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  pruneOldBuilds(root, target);
  return target;
}

/**
 * The directory of the current build (created when missing); its layout mirrors the repo's. It is
 * looked for under the code directory, then under DATA_DIR/build when `dataDir` is given, and made
 * in the first of those that can be written.
 * @param {{ dataDir?: string | null }} [options]
 * @returns {Promise<string>}
 */
export async function ensureDaemonBuild(options = {}) {
  const files = sourceFiles();
  const hash = sourcesHash(files);
  const roots = [BUILD_ROOT, ...(options.dataDir ? [dataDirBuildRoot(options.dataDir)] : [])];
  const built = roots.map((root) => join(root, hash)).find((target) => existsSync(join(target, COMPLETE_MARKER)));
  if (built) return built;
  try {
    // access(2) answers EROFS for a read-only mount even to root, who ignores permission bits.
    accessSync(REPO_ROOT, constants.W_OK);
    return await buildInto(files, BUILD_ROOT, hash);
  } catch (error) {
    if (!isReadOnlyError(error)) throw error;
    if (!options.dataDir)
      throw new NoWritableBuildDirError(
        `${REPO_ROOT} is read-only and holds no build of these sources: run \`npm run build\` there at install (and after each upgrade), or set DATA_DIR to a writable directory for the daemon to build into.`,
      );
    return buildInto(files, dataDirBuildRoot(options.dataDir), hash);
  }
}

/** Removes other builds older than an hour (a daemon still running one keeps its files open). */
/** @param {string} root @param {string} current */
function pruneOldBuilds(root, current) {
  const hourAgo = Date.now() - 60 * 60_000;
  for (const name of readdirSync(root)) {
    const path = join(root, name);
    if (path === current) continue;
    try {
      if (statSync(path).mtimeMs < hourAgo) rmSync(path, { recursive: true, force: true });
    } catch {
      // Gone already (another process pruned it).
    }
  }
}

/**
 * The embedded database's template in the build `target` (daemon/db/embedded-template.ts), made when
 * missing: a new DATA_DIR then starts from it instead of running initdb and every migration.
 * @param {string} target
 */
export async function ensureEmbeddedTemplate(target) {
  const path = join(target, 'embedded-template.tar.gz');
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
