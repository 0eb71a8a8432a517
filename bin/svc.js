#!/usr/bin/env node
// The svc CLI. oclif runs the commands from their build (cli/build.mjs: made on first use, and again
// whenever a source changes, so a clone needs no build step), without a TypeScript loader.
// `svc daemon start` is the exception: the daemon runs from its own build, without the CLI framework
// (daemon/start.mjs).
const argv = process.argv.slice(2);
if (argv[0] === 'daemon' && argv[1] === 'start' && !argv.some((arg) => arg === '--help' || arg === '-h')) {
  const { startDaemonProcess } = await import('../daemon/start.mjs');
  await startDaemonProcess(argv.slice(2));
} else {
  const { ensureCliBuild } = await import('../cli/build.mjs');
  const { NoWritableBuildDirError } = await import('../shared/build-cache.mjs');
  let build;
  try {
    build = await ensureCliBuild();
  } catch (error) {
    if (!(error instanceof NoWritableBuildDirError)) throw error;
    process.stderr.write(` ›   Error: ${error.message}\n`);
    process.exit(78);
  }
  const { execute } = await import('@oclif/core');
  // `svc` alone (or with global flags only: `svc --profile direct`) opens the dashboard for a person at a
  // terminal; anything else (pipes, CI) gets the help.
  const { entryArgs } = await import('../cli/entry-args.mjs');
  const args = entryArgs(argv, Boolean(process.stdin.isTTY && process.stdout.isTTY));
  await execute({ dir: build, ...(args ? { args } : {}) });
}
