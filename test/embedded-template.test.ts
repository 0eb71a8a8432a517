// The embedded database's template (daemon/db/embedded-template.ts): `npm run build` packs a data
// directory with every migration applied, and a new DATA_DIR starts from it instead of initdb. An
// existing data directory must open as it is, never be overwritten by the template.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueryTypes } from 'sequelize';
import { makeEmbeddedTemplate } from '../daemon/db/embedded-template.ts';
import { startEmbeddedPostgres } from '../daemon/db/embedded.ts';
import { connectSequelize } from '../daemon/db/index.ts';
import { MIGRATIONS_DIR, pendingMigrations } from '../daemon/db/migrate.ts';

const scratch = mkdtempSync(join(tmpdir(), 'svc-template-test-'));
const templatePath = join(scratch, 'embedded-template');

test.after(() => rmSync(scratch, { recursive: true, force: true }));

async function withEmbedded<T>(dataDir: string, run: (query: (sql: string) => Promise<any[]>) => Promise<T>) {
  const embedded = await startEmbeddedPostgres(dataDir, { templatePath });
  const sequelize = connectSequelize(embedded.url, 1);
  try {
    return await run((sql) => sequelize.query(sql, { type: QueryTypes.SELECT }));
  } finally {
    await sequelize.close();
    await embedded.stop();
  }
}

test('the template holds every migration; a new data directory starts from it with none pending', async () => {
  assert.is(await makeEmbeddedTemplate(templatePath), templatePath);
  assert.ok(existsSync(join(templatePath, 'PG_VERSION')), 'a data directory');
  assert.equal(
    readdirSync(scratch).filter((name) => name.includes('.partial')),
    [],
    'written under another name and renamed',
  );

  const dataDir = join(scratch, 'fresh');
  await withEmbedded(dataDir, async (query) => {
    const migrations = readdirSync(MIGRATIONS_DIR).filter((name) => /\.(ts|js)$/.test(name));
    const [{ applied }] = await query('SELECT count(*)::int AS applied FROM schema_migrations');
    assert.is(applied, migrations.length);
    const plans = await query('SELECT slug FROM billing_plans ORDER BY sort_order');
    assert.ok(plans.length > 0, "the migrations' own rows came with the schema");
  });
  assert.ok(existsSync(join(dataDir, 'pgdata', 'PG_VERSION')), 'unpacked into DATA_DIR/pgdata on disk');
});

test('an existing data directory opens as it is: its rows survive a start with a template', async () => {
  const dataDir = join(scratch, 'existing');
  await withEmbedded(dataDir, async (query) => {
    await query('CREATE TABLE kept (note text)');
    await query("INSERT INTO kept VALUES ('written after the first boot') RETURNING note");
  });
  const embedded = await startEmbeddedPostgres(dataDir, { templatePath });
  const sequelize = connectSequelize(embedded.url, 1);
  try {
    const rows = await sequelize.query<{ note: string }>('SELECT note FROM kept', { type: QueryTypes.SELECT });
    assert.equal(rows, [{ note: 'written after the first boot' }]);
    assert.equal(await pendingMigrations(sequelize), []);
  } finally {
    await sequelize.close();
    await embedded.stop();
  }
});

test.run();
