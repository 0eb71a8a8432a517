#!/usr/bin/env node
// The svc CLI. Sources are TypeScript run through tsx's loader, so a clone needs no build step.
import { register } from 'tsx/esm/api';

register();
const { execute } = await import('@oclif/core');
// `svc` alone opens the dashboard for a person at a terminal; anything else (pipes, CI) gets the help.
const bare = process.argv.length <= 2;
const args = bare && process.stdin.isTTY && process.stdout.isTTY ? ['dashboard'] : undefined;
await execute({ dir: import.meta.url, ...(args ? { args } : {}) });
