// Compiled builds of the repo's TypeScript, kept in a directory per hash of their sources: the daemon's
// (daemon/build.mjs) and the CLI's (cli/build.mjs) both come from here. A build is made when none of its
// hash exists, by whichever process needs it first; the hash covers every source's path, size and mtime
// and what npm installed, so an edited file or an upgraded package means a new build and a stale one is
// never run. Builds are written to a temporary directory and renamed into place, so processes starting
// together (tests, several nodes on one disk, a script running `svc` in parallel) never see half a build.
//
// When the build is missing and the code directory cannot be written (an installed node's read-only
// mount), the build goes to a fallback directory the caller names (the daemon's DATA_DIR/build, the
// CLI's cache directory). Plain JavaScript (with JSDoc types) because it runs before anything can load
// TypeScript.
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
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const COMPLETE_MARKER = '.complete';

/**
 * The TypeScript (and plain .mjs) sources under `dirs`, relative to the repo, sorted.
 * @param {string[]} dirs
 * @returns {string[]}
 */
export function listSourceFiles(dirs) {
  /** @type {(dir: string) => string[]} */
  const walk = (dir) =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return walk(path);
      return /\.(ts|tsx|mjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
    });
  return dirs.flatMap((dir) => walk(join(REPO_ROOT, dir))).sort();
}

/**
 * The bundles carry the packages' code too: what npm installed is part of a build's sources (an
 * upgrade of a package must not keep running the old copy inside an old bundle).
 */
const INSTALLED_PACKAGES_FILES = ['package.json', 'package-lock.json', 'node_modules/.package-lock.json'];

/** @param {string} format @param {string[]} files */
function sourcesHash(format, files) {
  const hash = createHash('sha256').update(format);
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
 * @param {string} code
 */
export function rewriteRelativeSpecifiers(code) {
  return code.replace(/(["'`])(\.{1,2}\/[^"'`\s]+?)\.tsx?\1/g, '$1$2.js$1');
}

/**
 * Transpiles every file on its own into `outdir`, mirroring the repo's layout (.mjs files are copied):
 * what code loaded by path needs (migrations, worker bootstraps, the render sandbox).
 * @param {string[]} files @param {string} outdir
 */
export async function transpileEach(files, outdir) {
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

/** A bundle runs CommonJS packages inside an ES module: they get a `require` of their own. */
const BUNDLE_BANNER =
  "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);";

/**
 * Bundles `entryPoints` into `bundleDir`, over the files transpiled into `outdir` by transpileEach().
 * Code that finds files relative to its own module (`new URL('./x.ts', import.meta.url)`: worker
 * files, the migrations directory) gets the URL its source file has in the build rather than the
 * bundle's, so those files are found where they were; every output (entries and, with `splitting`,
 * shared chunks) is written to `bundleDir` itself so that one relative URL holds for all of them.
 * @param {{ entryPoints: import('esbuild').BuildOptions['entryPoints'], outdir: string, bundleDir: string,
 *   external: string[], splitting?: boolean, plugins?: import('esbuild').Plugin[] }} options
 */
export async function bundleForBuild({ entryPoints, outdir, bundleDir, external, splitting = false, plugins = [] }) {
  const { build } = await import('esbuild');
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
    entryPoints,
    outdir: bundleDir,
    entryNames: '[name]',
    chunkNames: 'chunk-[hash]',
    allowOverwrite: true,
    bundle: true,
    splitting,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    jsx: 'automatic',
    external,
    banner: { js: BUNDLE_BANNER },
    plugins: [ownUrls, ...plugins],
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

/**
 * Compiles into `root`/`hash`. A build outside the code directory gets what module resolution finds
 * beside the code: package.json's "type": "module" and a link to its node_modules.
 * @param {BuildRecipe} recipe @param {string[]} files @param {string} root @param {string} hash
 */
async function buildInto(recipe, files, root, hash) {
  const target = join(root, hash);
  mkdirSync(root, { recursive: true });
  const scratch = join(root, `tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    if (!root.startsWith(`${REPO_ROOT}/`)) {
      mkdirSync(scratch);
      writeFileSync(join(scratch, 'package.json'), '{ "type": "module" }\n');
      symlinkSync(join(REPO_ROOT, 'node_modules'), join(scratch, 'node_modules'), 'dir');
    }
    await recipe.compile(files, scratch);
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
 * @typedef {object} BuildRecipe
 * @property {string[]} sourceDirs the directories whose files the build is made of (and hashed over)
 * @property {string} format bumped when the build itself changes shape (keeps old builds from being reused)
 * @property {string} root where builds go in the code directory
 * @property {(files: string[], outdir: string) => Promise<void>} compile writes the build into `outdir`
 * @property {string} readOnlyMessage the sentence for a read-only code directory without a build or a fallback
 */

/**
 * The directory of the current build of `recipe` (created when missing). It is looked for under the
 * recipe's root, then under `fallbackRoot` when given, and made in the first of those that can be
 * written.
 * @param {BuildRecipe} recipe @param {string | null} [fallbackRoot]
 * @returns {Promise<string>}
 */
export async function ensureBuild(recipe, fallbackRoot = null) {
  const files = listSourceFiles(recipe.sourceDirs);
  const hash = sourcesHash(recipe.format, files);
  const roots = [recipe.root, ...(fallbackRoot ? [fallbackRoot] : [])];
  const built = roots.map((root) => join(root, hash)).find((target) => existsSync(join(target, COMPLETE_MARKER)));
  if (built) return built;
  try {
    // access(2) answers EROFS for a read-only mount even to root, who ignores permission bits.
    accessSync(REPO_ROOT, constants.W_OK);
    return await buildInto(recipe, files, recipe.root, hash);
  } catch (error) {
    if (!isReadOnlyError(error)) throw error;
    if (!fallbackRoot) throw new NoWritableBuildDirError(recipe.readOnlyMessage);
    return buildInto(recipe, files, fallbackRoot, hash);
  }
}

/** A build's directory is named by its hash; scratch directories start with tmp-. */
const BUILD_NAME = /^([0-9a-f]{16}|tmp-.*)$/;

/**
 * Removes other builds older than an hour (a process still running one keeps its files open), and
 * nothing else: the CLI's builds live inside the daemon's root.
 * @param {string} root @param {string} current
 */
function pruneOldBuilds(root, current) {
  const hourAgo = Date.now() - 60 * 60_000;
  for (const name of readdirSync(root)) {
    const path = join(root, name);
    if (path === current || !BUILD_NAME.test(name)) continue;
    try {
      if (statSync(path).mtimeMs < hourAgo) rmSync(path, { recursive: true, force: true });
    } catch {
      // Gone already (another process pruned it).
    }
  }
}
