// `svc` runs its commands from a build, not from TypeScript transpiled at load time: through tsx, every
// run compiled and loaded all 130 commands and their imports before doing anything (`svc --version`
// took 1.4–3.9 s on a slow 2-core VM; README, "The CLI"). bin/svc.js calls ensureCliBuild(), which
// makes the build with the daemon's machinery (shared/build-cache.mjs) into .build/cli/<hash>/ when
// the sources changed, and runs oclif on it:
//
// - each command is an entry of one esbuild run with code splitting, so running a command loads that
//   command and the chunks it shares with others, not the other 129 (Ink and React stay packages,
//   imported only when a screen is shown: cli/ui/render.ts);
// - oclif.manifest.json, written at build time, carries every command's id, flags, arguments and help,
//   so `svc --help`, `svc --version` and the command_not_found hook load no command at all;
// - the build's package.json is the repo's oclif configuration pointed at those files.
//
// A read-only install without a current build (one made by `npm run build`) builds into the user's
// cache directory. Plain JavaScript (with JSDoc types) because it runs before anything can load
// TypeScript.
import { readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { UNBUNDLED_PACKAGES } from '../daemon/build.mjs';
import { bundleForBuild, ensureBuild, REPO_ROOT, transpileEach } from '../shared/build-cache.mjs';

const CLI_BUILD_ROOT = join(REPO_ROOT, '.build', 'cli');
/** Where the commands, the hook and their shared chunks are, inside a build. */
const BUNDLE_DIR = 'cli';
/** The build's bundle of cli/commands.ts: every command, for the manifest (and nothing at run time). */
const ALL_COMMANDS_ENTRY = 'all-commands';
const HOOK_ENTRY = 'hook-command-not-found';

/**
 * Packages the commands import from node_modules rather than from the bundle: oclif (bin/svc.js and
 * the commands must share one copy of it), Ink and React (loaded only for a screen; bundled, their
 * chunk would still be read by every command that can show one), and what the daemon leaves out
 * (`svc doctor --local` and `svc db migrate` run daemon code).
 */
const CLI_UNBUNDLED_PACKAGES = ['@oclif/core', 'ink', ...UNBUNDLED_PACKAGES];

/**
 * The command files that cli/commands.ts lists, as (source, output name): commands/templates/tags/list.ts
 * becomes templates-tags-list.js.
 * @returns {{ in: string, out: string }[]}
 */
function commandEntries() {
  const list = readFileSync(join(REPO_ROOT, 'cli/commands.ts'), 'utf8');
  return [...list.matchAll(/from '\.\/commands\/([^']+)\.(tsx?)';/g)].map(([, path, extension]) => ({
    in: join(REPO_ROOT, 'cli/commands', `${path}.${extension}`),
    out: path.replaceAll('/', '-'),
  }));
}

/**
 * Plain .mjs sources (daemon/start.mjs, the build scripts) find the repo from their own URL: the
 * bundles import them where they are instead of carrying a copy that would look in the build.
 * @param {string} bundleDir
 * @returns {import('esbuild').Plugin}
 */
function keepPlainModulesInPlace(bundleDir) {
  return {
    name: 'plain-modules-in-place',
    setup(plugin) {
      plugin.onResolve({ filter: /\.mjs$/ }, (args) => {
        if (args.importer.includes('/node_modules/') || !args.path.startsWith('.')) return undefined;
        const fromBundle = relative(bundleDir, join(args.resolveDir, args.path));
        return { path: fromBundle.startsWith('.') ? fromBundle : `./${fromBundle}`, external: true };
      });
    },
  };
}

/**
 * The repo's package.json with oclif pointed at the build: commands found through the manifest (the
 * "pattern" strategy loads only the command that runs; "explicit" would load them all).
 * @param {string} commandsTarget
 */
function buildPackageJson(commandsTarget) {
  const repo = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
  return {
    name: repo.name,
    version: repo.version,
    type: 'module',
    oclif: {
      ...repo.oclif,
      commands: commandsTarget,
      hooks: { command_not_found: `./${BUNDLE_DIR}/${HOOK_ENTRY}.js` },
    },
  };
}

/**
 * oclif's own manifest of the built commands (ids, flags, help), computed by loading them all once,
 * plus where each command's file is, so that oclif loads just that file to run it.
 * @param {string} outdir @param {{ in: string, out: string }[]} entries
 */
async function writeManifest(outdir, entries) {
  const { Plugin } = await import('@oclif/core');
  const bundleDir = join(outdir, BUNDLE_DIR);
  const pjson = buildPackageJson({
    strategy: 'explicit',
    target: `./${BUNDLE_DIR}/${ALL_COMMANDS_ENTRY}.js`,
    identifier: 'COMMANDS',
  });
  const plugin = new Plugin({ root: outdir, pjson, isRoot: true, ignoreManifest: true, errorOnManifestCreate: true });
  await plugin.load();
  /** @type {Map<unknown, string>} */
  const fileOfCommand = new Map();
  for (const entry of entries) {
    const module = await import(pathToFileURL(join(bundleDir, `${entry.out}.js`)).href);
    fileOfCommand.set(module.default, entry.out);
  }
  const { COMMANDS } = await import(pathToFileURL(join(bundleDir, `${ALL_COMMANDS_ENTRY}.js`)).href);
  const commands = Object.fromEntries(
    Object.entries(plugin.manifest.commands).map(([id, cached]) => {
      const file = fileOfCommand.get(COMMANDS[id]);
      if (!file) throw new Error(`svc ${id}: its class is not the default export of a file cli/commands.ts imports`);
      return [id, { ...cached, isESM: true, relativePath: [BUNDLE_DIR, `${file}.js`] }];
    }),
  );
  writeFileSync(
    join(outdir, 'oclif.manifest.json'),
    JSON.stringify({ commands, version: plugin.manifest.version }, null, 1),
  );
}

/** @param {string[]} files @param {string} outdir */
async function compile(files, outdir) {
  // `svc db migrate` finds the migrations beside daemon/db/migrate.ts's built file, as the daemon does.
  await transpileEach(files, outdir);
  const entries = commandEntries();
  const bundleDir = join(outdir, BUNDLE_DIR);
  await bundleForBuild({
    entryPoints: [
      ...entries,
      { in: join(REPO_ROOT, 'cli/commands.ts'), out: ALL_COMMANDS_ENTRY },
      { in: join(REPO_ROOT, 'cli/hooks/command-not-found.ts'), out: HOOK_ENTRY },
    ],
    outdir,
    bundleDir,
    external: CLI_UNBUNDLED_PACKAGES,
    splitting: true,
    plugins: [keepPlainModulesInPlace(bundleDir)],
  });
  writeFileSync(join(outdir, 'package.json'), `${JSON.stringify(buildPackageJson(`./${BUNDLE_DIR}`), null, 2)}\n`);
  await writeManifest(outdir, entries);
}

/** @type {import('../shared/build-cache.mjs').BuildRecipe} */
const CLI_BUILD = {
  // The CLI runs daemon code too: `svc templates preview` renders with it, `svc doctor --local` and
  // `svc db migrate` open the database with it.
  sourceDirs: ['cli', 'daemon', 'shared', 'migrations'],
  format: '1',
  root: CLI_BUILD_ROOT,
  compile,
  readOnlyMessage: `${REPO_ROOT} is read-only and holds no build of these sources: run \`npm run build\` there at install (and after each upgrade).`,
};

/**
 * Where a read-only install builds: the XDG cache directory, read here because this runs before the
 * CLI's environment module can be loaded.
 */
function cacheBuildRoot() {
  const cacheHome = process.env.XDG_CACHE_HOME?.trim() || join(homedir(), '.cache');
  return join(cacheHome, 'svc', 'cli-build');
}

/**
 * The directory of the CLI's current build (made when missing): a package root for oclif, with its
 * package.json and oclif.manifest.json.
 * @returns {Promise<string>}
 */
export function ensureCliBuild() {
  return ensureBuild(CLI_BUILD, cacheBuildRoot());
}

// `npm run build` (at install), with the daemon's: build now, in the read-only code directory.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const target = await ensureCliBuild();
  process.stdout.write(`svc built into ${target}\n`);
}
