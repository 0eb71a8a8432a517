#!/usr/bin/env node
// The svc CLI. Its sources are TypeScript run through tsx's loader, so a clone needs no build step.
// `svc daemon start` is the exception: the daemon runs from its compiled build, without the CLI
// framework or the loader (daemon/start.mjs).
const argv = process.argv.slice(2);
if (argv[0] === 'daemon' && argv[1] === 'start' && !argv.some((arg) => arg === '--help' || arg === '-h')) {
  const { startDaemonProcess } = await import('../daemon/start.mjs');
  await startDaemonProcess(argv.slice(2));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { execute } = await import('@oclif/core');
  // `svc` alone opens the dashboard for a person at a terminal; anything else (pipes, CI) gets the help.
  const bare = argv.length === 0;
  const args = bare && process.stdin.isTTY && process.stdout.isTTY ? ['dashboard'] : undefined;
  await execute({ dir: import.meta.url, ...(args ? { args } : {}) });
}
