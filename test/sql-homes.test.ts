// Issue 30: one data-access home per hot table. The batch-statement builder (daemon/db/batch.ts)
// numbers named parameters as the text uses them; and no daemon file outside the homes
// (daemon/modules/emails/sql/, daemon/queue/sql/) writes SQL against email_logs, jobs or failed_jobs.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { declareBatch } from '../daemon/db/batch.ts';
import { RECORD_OUTCOMES, recordOutcomesValues } from '../daemon/modules/emails/sql/record-outcomes.ts';
import { SETTLE_JOBS } from '../daemon/queue/sql/settle.ts';

const DAEMON = resolve(import.meta.dirname, '../daemon');

test('declareBatch numbers parameters as the text first uses them and shares a reused column', () => {
  const batch = declareBatch(
    'test.batch',
    {
      batches: {
        people: [
          { name: 'id', type: 'uuid' },
          { name: 'name', type: 'text' },
          { name: 'age', type: 'int' },
        ],
      },
      scalars: { owner: 'text' },
    },
    (sql) =>
      `SELECT * FROM ${sql.unnest('people', 'p', ['name', 'id'])} WHERE ${sql.scalar('owner')} <> '' ` +
      `AND p.id = ANY(${sql.column('people', 'id')})`,
  );
  assert.is(
    batch.statement.text,
    `SELECT * FROM unnest($1::text[], $2::uuid[]) AS p(name, id) WHERE $3::text <> '' AND p.id = ANY($2::uuid[])`,
  );
  // `age` is never used: it is no parameter. A missing field is NULL.
  assert.equal(
    batch.values({
      owner: 'me',
      people: [
        { id: 'a', name: 'Ann', age: 3 },
        { id: 'b', age: 4 },
      ],
    }),
    [['Ann', null], ['a', 'b'], 'me'],
  );
});

test('declareBatch refuses a column or scalar it was not given', () => {
  const shape = { batches: { rows: [{ name: 'id', type: 'uuid' }] } };
  assert.throws(
    () => declareBatch('test.bad-column', shape, (sql) => sql.unnest('rows', 'r', ['nope'])),
    /no column nope/,
  );
  assert.throws(() => declareBatch('test.bad-scalar', shape, (sql) => sql.scalar('nope' as never)), /no scalar nope/);
});

test('RECORD_OUTCOMES: every parameter is used, the events shared by the record and the fan-out', () => {
  const values = recordOutcomesValues('worker-1', {
    logs: [],
    timeline: [],
    events: [],
    done: ['7'],
    retry: [{ id: '8', delayMs: 12.6, error: 'x'.repeat(5000) }],
    fail: [],
  });
  const used = new Set([...RECORD_OUTCOMES.statement.text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
  assert.is(used.size, values.length);
  for (let n = 1; n <= values.length; n += 1) assert.ok(used.has(n), `$${n} is used`);
  assert.ok(values.includes('worker-1'));
  assert.ok(
    values.some((v) => Array.isArray(v) && v[0] === 13),
    'the delay is rounded',
  );
  assert.ok(
    values.some((v) => Array.isArray(v) && typeof v[0] === 'string' && v[0].length === 4001),
    'the error is cut',
  );
  // The settle CTEs are the queue's own statement's, not a copy.
  const settleCtes = SETTLE_JOBS.statement.text.slice(SETTLE_JOBS.statement.text.indexOf('done AS ('));
  const withoutNumbers = (text: string) => text.replace(/\$\d+/g, '$n');
  const upToSelect = (text: string) => text.slice(0, text.lastIndexOf('SELECT (SELECT count(*) FROM done)'));
  assert.ok(
    withoutNumbers(RECORD_OUTCOMES.statement.text).includes(withoutNumbers(upToSelect(settleCtes)).trim()),
    'the record statement embeds the settle CTEs',
  );
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

const HOMES = ['modules/emails/sql/', 'queue/sql/'];
const SQL_ON_HOT_TABLES = /\b(FROM|INTO|UPDATE|JOIN|USING)\s+(email_logs|jobs|failed_jobs)\b/i;

test('no daemon file outside the homes writes SQL against email_logs, jobs or failed_jobs', () => {
  const offenders: string[] = [];
  for (const file of sourceFiles(DAEMON)) {
    const path = relative(DAEMON, file);
    if (HOMES.some((home) => path.startsWith(home))) continue;
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        const code = line.replace(/\/\/.*$/, '').replace(/^\s*\*.*$/, '');
        if (SQL_ON_HOT_TABLES.test(code)) offenders.push(`daemon/${path}:${i + 1}: ${line.trim()}`);
      });
  }
  assert.equal(offenders, [], `SQL on a hot table outside its home:\n${offenders.join('\n')}`);
});

test.run();
