// Starts the long-lived worker threads (Bree). The queue issue fills in the workers; until then
// the pool is empty and /health/ready reports that no workers run.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Secrets } from '../secrets.ts';

export interface WorkerPool {
  alive(): boolean;
  names(): string[];
  stop(): Promise<void>;
}

export interface StartWorkersOptions {
  config: Config;
  databaseUrl: string;
  secrets: Secrets;
  log: Logger;
}

export async function startWorkers(_options: StartWorkersOptions): Promise<WorkerPool> {
  return { alive: () => false, names: () => [], stop: async () => {} };
}
