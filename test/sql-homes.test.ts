// One data-access home per hot table (issues 30, 50 §2). The batch-statement builder (daemon/db/batch.ts)
// numbers named parameters as the text uses them; and no daemon file outside a hot table's home (HOMES
// below) runs a statement on it: raw SQL, a call of its Sequelize model, or a templated table name.
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

/**
 * Issue 50 §2: every hot table (written once per message) has ONE home, a `sql/` folder beside its owner
 * (paths under daemon/). A statement on the table — raw SQL, a call of its Sequelize model, or a table
 * name templated into SQL — lives there; everyone else calls a function of the home.
 */
const HOMES: Record<string, string> = {
  email_logs: 'modules/emails/sql/',
  recipient_outcomes: 'modules/emails/sql/',
  jobs: 'queue/sql/',
  failed_jobs: 'queue/sql/',
  mta_spool: 'mta/sql/',
  webhook_deliveries: 'modules/webhooks/sql/',
  suppressions: 'modules/suppressions/sql/',
};

/**
 * Statements of one home that must also touch another home's table, being ONE statement on the hot path
 * (`file: table`, with why). Only files inside a home may be listed. Remove a line when its statement
 * goes; a line that no longer matches fails, so the list only shrinks.
 */
const GUESTS: Record<string, string[]> = {
  // A campaign's cancel deletes each queued send job found through its log, with the log's change, in
  // one statement. (The drain's claim embeds the queue's own, claimJobsSql.)
  'modules/emails/sql/cancel-queued.ts': ['jobs'],
  // A delivery's outcome writes the log with what its spool row keeps for it (one write per log,
  // docs/mta.md "One write of the log per delivery"): the spool row is joined, never written.
  'modules/emails/sql/record-outcomes.ts': ['mta_spool'],
  'modules/emails/sql/spooled-log.ts': ['mta_spool'],
};

/**
 * Files outside a `sql/` folder that put a table's name into SQL as a template, being machinery over many
 * tables: partitions (created, attached, dropped, a table turned partitioned), the migrations' own table,
 * and the retention's deletes of the tables that are not hot (db/expiry.ts refuses a hot table's name).
 */
const TABLE_MACHINERY = ['db/partitions.ts', 'db/migrate.ts', 'db/expiry.ts'];

/** A folder of statements (a hot table's home or another's): there a statement is composed from fragments. */
const inSqlFolder = (path: string) => /(^|\/)sql\//.test(path);

// SQL is written in capitals here; a lower-case "from" is English (a message, a comment).
const SQL_VERBS = String.raw`\b(?:FROM|INTO|UPDATE|JOIN|USING|TRUNCATE(?:\s+TABLE)?)\s+`;
const HOT = Object.keys(HOMES);
const SQL_ON_HOT_TABLE = new RegExp(`${SQL_VERBS}"?(${HOT.join('|')})\\b`, 'g');
const TEMPLATED_TABLE = new RegExp(`${SQL_VERBS}\\$\\{(?!sql\\.unnest\\()`);
/** Sequelize's statements on a model: its static finders and writers. */
const MODEL_METHODS =
  'findAll|findOne|findByPk|findAndCountAll|findOrCreate|findCreateFind|count|create|bulkCreate|update|upsert|destroy|restore|truncate|increment|decrement|sum|max|min|aggregate';

/** The Sequelize models of the hot tables, by class name, read from their `X.init(…, { tableName })`. */
function hotModels(files: string[]): Map<string, string> {
  const models = new Map<string, string>();
  for (const file of files) {
    for (const match of readFileSync(file, 'utf8').matchAll(/(\w+)\.init\(\s*\{[\s\S]*?tableName:\s*'(\w+)'/g)) {
      if (HOT.includes(match[2])) models.set(match[1], match[2]);
    }
  }
  return models;
}

/** The code of a line without its comment (a `//` tail, a JSDoc line). */
function codeOf(line: string): string {
  return line.replace(/(^|[^:'"`\\])\/\/.*$/, '$1').replace(/^\s*(\/\*\*?|\*)(\s.*|$)/, '');
}

/** The text with its import and re-export declarations blanked, lines kept (a schema may share a model's name). */
function withoutImports(text: string): string {
  return text.replace(/^(?:import|export)\b[^;]*?\bfrom\s+'[^']+';/gm, (declaration) =>
    declaration.replace(/[^\n]/g, ''),
  );
}

interface Finding {
  path: string;
  line: number;
  table: string;
  text: string;
}

/** Every statement on a hot table in daemon/, and every templated table name. */
function scan(): { statements: Finding[]; templated: Finding[] } {
  const files = sourceFiles(DAEMON);
  const models = hotModels(files);
  const modelNames = [...models.keys()].join('|');
  const modelCall = new RegExp(
    // Name.findAll(…), models.Name, and the model handed to a helper (findPage(Name, …), on its line or its own).
    `\\b(${modelNames})\\s*\\.\\s*(?:${MODEL_METHODS})\\s*\\(|\\bmodels\\.(${modelNames})\\b|(?:[(,]|^)\\s*(${modelNames})\\s*(?:[,)]|$)`,
    'g',
  );
  const statements: Finding[] = [];
  const templated: Finding[] = [];
  for (const file of files) {
    const path = relative(DAEMON, file);
    withoutImports(readFileSync(file, 'utf8'))
      .split('\n')
      .forEach((line, i) => {
        const code = codeOf(line);
        const at = { path, line: i + 1, text: line.trim() };
        for (const match of code.matchAll(SQL_ON_HOT_TABLE)) statements.push({ ...at, table: match[1] });
        for (const match of code.matchAll(modelCall)) {
          statements.push({ ...at, table: models.get(match[1] ?? match[2] ?? match[3])! });
        }
        if (TEMPLATED_TABLE.test(code)) templated.push({ ...at, table: '?' });
      });
  }
  return { statements, templated };
}

const inHome = (path: string) => Object.values(HOMES).some((home) => path.startsWith(home));

test('the hot tables have their models found, db/expiry.ts refuses them, and every guest file sits in a home', () => {
  const models = hotModels(sourceFiles(DAEMON));
  assert.equal([...models.values()].sort(), ['email_logs', 'suppressions', 'webhook_deliveries']);
  for (const file of Object.keys(GUESTS)) assert.ok(inHome(file), `${file} is in a home`);
  // The retention's generic deletes refuse these names by type: the same list.
  const hotType = /type HotTable =([^;]+);/.exec(readFileSync(join(DAEMON, 'db/expiry.ts'), 'utf8'))![1];
  assert.equal([...hotType.matchAll(/'(\w+)'/g)].map((m) => m[1]).sort(), [...HOT].sort());
});

test('the scan sees raw SQL, model calls and templated names, and skips comments', () => {
  assert.ok(SQL_ON_HOT_TABLE.test('DELETE FROM mta_spool WHERE'));
  SQL_ON_HOT_TABLE.lastIndex = 0;
  assert.ok(!SQL_ON_HOT_TABLE.test('FROM mta_spool_waits'));
  SQL_ON_HOT_TABLE.lastIndex = 0;
  assert.ok(TEMPLATED_TABLE.test('`DELETE FROM ${table} WHERE`'));
  assert.ok(!TEMPLATED_TABLE.test("FROM ${sql.unnest('logs', 'o')}"));
  assert.is(codeOf('  // UPDATE email_logs'), '  ');
  assert.is(codeOf(' * FROM email_logs'), '');
  assert.is(codeOf("x('http://a') // FROM jobs"), "x('http://a') ");
});

test('no daemon file outside its home runs a statement on a hot table', () => {
  const { statements } = scan();
  assert.ok(statements.length > 50, `found the statements (${statements.length})`);
  const offenders = statements
    .filter((s) => !s.path.startsWith(HOMES[s.table]) && !GUESTS[s.path]?.includes(s.table))
    .map((s) => `daemon/${s.path}:${s.line} [${s.table} → daemon/${HOMES[s.table]}]: ${s.text}`);
  assert.equal(offenders, [], `statements on a hot table outside its home:\n${offenders.join('\n')}`);
  const stale = Object.entries(GUESTS).flatMap(([file, tables]) =>
    tables
      .filter((table) => !statements.some((s) => s.path === file && s.table === table))
      .map((table) => `${file}: ${table}`),
  );
  assert.equal(stale, [], `GUESTS lines that no longer match (remove them):\n${stale.join('\n')}`);
});

test('no daemon file outside a sql/ folder templates a table name into SQL', () => {
  const offenders = scan()
    .templated.filter((s) => !inSqlFolder(s.path) && !TABLE_MACHINERY.includes(s.path))
    .map((s) => `daemon/${s.path}:${s.line}: ${s.text}`);
  assert.equal(
    offenders,
    [],
    `a templated table name may be a hot one: take the statement from the table's home:\n${offenders.join('\n')}`,
  );
});

test.run();
