// The daemon runs compiled JavaScript, not TypeScript transpiled at load time: tsx in every worker
// thread held its compiler, transpiled modules and source maps once per thread (idle RSS 707 MB on
// PostgreSQL with four threads; see the README's footprint figures). `svc daemon start` (and so
// `npm start`) calls ensureDaemonBuild(), which transpiles daemon/, shared/ and migrations/ with
// esbuild (well under a second) into .build/<hash of the sources>/ when that build is missing; the
// hash covers every source's path, size and mtime, so an edited file means a new build and a stale
// one is never run. Builds are written to a temporary directory and renamed into place, so daemons
// booting together (tests, several nodes on one disk) never see half a build.
// Plain JavaScript (with JSDoc types) because it runs before anything can load TypeScript.
import { createHash, randomBytes } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const BUILD_ROOT = join(REPO_ROOT, '.build');
const SOURCE_DIRS = ['daemon', 'shared', 'migrations'];
const COMPLETE_MARKER = '.complete';
/** Bumped when the build itself changes shape (keeps old builds from being reused). */
const BUILD_FORMAT = '1';

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

/** @param {string[]} files */
function sourcesHash(files) {
  const hash = createHash('sha256').update(BUILD_FORMAT);
  for (const file of files) {
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
}

/** The directory of the current build (created when missing); its layout mirrors the repo's. @returns {Promise<string>} */
export async function ensureDaemonBuild() {
  const files = sourceFiles();
  const target = join(BUILD_ROOT, sourcesHash(files));
  if (existsSync(join(target, COMPLETE_MARKER))) return target;
  mkdirSync(BUILD_ROOT, { recursive: true });
  const scratch = join(BUILD_ROOT, `tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await compile(files, scratch);
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
  pruneOldBuilds(target);
  return target;
}

/** Removes other builds older than an hour (a daemon still running one keeps its files open). */
/** @param {string} current */
function pruneOldBuilds(current) {
  const hourAgo = Date.now() - 60 * 60_000;
  for (const name of readdirSync(BUILD_ROOT)) {
    const path = join(BUILD_ROOT, name);
    if (path === current) continue;
    try {
      if (statSync(path).mtimeMs < hourAgo) rmSync(path, { recursive: true, force: true });
    } catch {
      // Gone already (another process pruned it).
    }
  }
}
