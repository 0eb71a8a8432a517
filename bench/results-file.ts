// Where a bench writes its results: its own file in bench/ (kept in the repository, the README's figures),
// or BENCH_RESULTS_FILE when set — `npm run bench:check` runs each bench in its short form with a
// temporary file there, so that a short run never overwrites the kept figures.
import { join } from 'node:path';
import { BENCH_DIR } from './children.ts';

export function resultsFile(name: string): string {
  return process.env.BENCH_RESULTS_FILE || join(BENCH_DIR, name);
}

/** True when the results go to bench:check's file rather than the kept one. */
export const checkRun = () => Boolean(process.env.BENCH_RESULTS_FILE);
