// Every migration is reversible: all the way down leaves an empty schema, and up again rebuilds it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestDatabase, type TestDatabase } from './helpers/context.ts';
import { openDatabase, type Database } from '../daemon/db/index.ts';
import { createMigrator, migrateUp, pendingMigrations } from '../daemon/db/migrate.ts';

let database: TestDatabase;
let db: Database;
test.before(async () => {
  database = await createTestDatabase();
  db = await openDatabase({ databaseUrl: database.url, dataDir: database.dataDir });
});
test.after(async () => {
  await db?.close();
  await database?.drop();
});

async function tables(): Promise<string[]> {
  const rows = await db.sequelize.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`,
    { type: QueryTypes.SELECT },
  );
  return rows.map((row) => row.name);
}

test('up applies every migration; down to 0 removes every table; up again rebuilds the same schema', async () => {
  const applied = await migrateUp(db.sequelize);
  assert.ok(applied.length >= 2);
  assert.ok(applied.includes('0002-queue'));
  assert.equal(await pendingMigrations(db.sequelize), []);
  const schema = await tables();
  for (const table of ['jobs', 'failed_jobs', 'tenants', 'admins'])
    assert.ok(schema.includes(table), `${table} exists`);

  await (await createMigrator(db.sequelize)).down({ to: 0 });
  assert.equal(await tables(), ['schema_migrations'], 'every migration dropped what it created');
  const leftovers = await db.sequelize.query<{ name: string }>(
    `SELECT typname AS name FROM pg_type WHERE typnamespace = 'public'::regnamespace AND typtype IN ('e', 'd')
     UNION ALL SELECT proname FROM pg_proc WHERE pronamespace = 'public'::regnamespace`,
    { type: QueryTypes.SELECT },
  );
  assert.equal(leftovers, [], 'no enum, domain or function left behind');
  assert.equal((await pendingMigrations(db.sequelize)).length, applied.length);

  assert.equal(await migrateUp(db.sequelize), applied);
  assert.equal(await tables(), schema);
});

test('migrating again is a no-op', async () => {
  assert.equal(await migrateUp(db.sequelize), []);
});

test.run();
