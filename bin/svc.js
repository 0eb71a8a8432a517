#!/usr/bin/env node
// The svc CLI. Sources are TypeScript run through tsx's loader, so a clone needs no build step.
import { register } from 'tsx/esm/api';

register();
const { execute } = await import('@oclif/core');
await execute({ dir: import.meta.url });
