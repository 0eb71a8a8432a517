// Preloaded (node --import) into the daemon children by the bench when BENCH_QUERY_COUNT_DIR is set:
// counts the statements every pg client of this process sends (Sequelize goes through pg.Client),
// per thread — worker threads run the preload too — and writes the running count to
// <dir>/<pid>-<threadId>.count four times a second. Plain .mjs: it runs before tsx is registered.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';

const dir = process.env.BENCH_QUERY_COUNT_DIR;
if (dir) {
  // The daemon's `import pg from 'pg'` loads this same CommonJS module instance.
  const pg = createRequire(join(process.cwd(), 'package.json'))('pg');
  const query = pg.Client.prototype.query;
  let count = 0;
  pg.Client.prototype.query = function countedQuery(...args) {
    count += 1;
    return query.apply(this, args);
  };
  const file = join(dir, `${process.pid}-${threadId}.count`);
  let written = -1;
  setInterval(() => {
    if (count === written) return;
    writeFileSync(file, String(count));
    written = count;
  }, 250).unref();
}
