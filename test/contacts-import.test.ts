// POST /contacts/import writes several chunks at once (daemon/modules/contacts/import-writer.ts): the
// answer and the contacts must be those of a file written one chunk after the other.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createWorld } from './helpers/fixtures.ts';
import { IMPORT_CHUNK_ROWS, MAX_LISTED_ERRORS } from '../daemon/modules/contacts/import.ts';

let ctx: TestContext;

test.before(async () => {
  ctx = await createTestContext();
});
test.after(async () => {
  await ctx?.close();
});

async function rows<T extends object = Record<string, unknown>>(
  sql: string,
  replacements: Record<string, unknown> = {},
): Promise<T[]> {
  return ctx.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });
}

function importCsv(headers: Record<string, string>, lines: string[]) {
  return ctx.app.inject({
    method: 'POST',
    url: '/contacts/import',
    headers: { ...headers, 'content-type': 'text/csv' },
    payload: lines.join('\n') + '\n',
  });
}

async function put(headers: Record<string, string>, body: object) {
  const res = await ctx.app.inject({ method: 'PUT', url: '/contacts', headers, payload: body });
  assert.ok(res.statusCode < 300, res.body);
}

test('rows of one contact in different chunks apply in file order, whichever key names it', async () => {
  const w = await createWorld(ctx.app);
  // X is named by its address in chunk 1 and by its externalId (with a new address) in chunk 3: the rows
  // share no key, only the contact. Y is renamed by externalId in chunk 2, and its old address names a
  // new contact in chunk 3. P is named by address in chunks 1 and 4.
  await put(w.asKey, { email: 'x@example.com', externalId: 'EXT-X', firstName: 'X' });
  await put(w.asKey, { email: 'y-old@example.com', externalId: 'EXT-Y', firstName: 'Y' });
  const data = Array.from({ length: 4 * IMPORT_CHUNK_ROWS }, (_, i) => `f${i}@example.com,,Filler ${i}`);
  const at = (chunk: number, row: number, line: string) => (data[chunk * IMPORT_CHUNK_ROWS + row] = line);
  at(0, 10, 'x@example.com,,From chunk 1');
  at(0, 20, 'p@example.com,,P first');
  at(1, 30, 'y-new@example.com,EXT-Y,Y renamed');
  at(2, 40, 'x-renamed@example.com,EXT-X,From chunk 3');
  at(2, 50, 'y-old@example.com,,New at the old address');
  at(3, 60, 'p@example.com,,P last');
  const res = await importCsv(w.asKey, ['email,externalId,firstName', ...data]);
  assert.is(res.statusCode, 200, res.body);
  const body = res.json();
  // Updated: X twice, Y once, P once (created in chunk 1, updated in chunk 4).
  assert.equal([body.rows, body.created, body.updated, body.failed], [4000, 3996, 4, 0]);
  const named = await rows<{ email: string; external_id: string | null; first_name: string }>(
    `SELECT email, external_id, first_name FROM contacts WHERE tenant_id = :t AND email NOT LIKE 'f%' ORDER BY email`,
    { t: w.tenantId },
  );
  assert.equal(named, [
    { email: 'p@example.com', external_id: null, first_name: 'P last' },
    { email: 'x-renamed@example.com', external_id: 'EXT-X', first_name: 'From chunk 3' },
    { email: 'y-new@example.com', external_id: 'EXT-Y', first_name: 'Y renamed' },
    { email: 'y-old@example.com', external_id: null, first_name: 'New at the old address' },
  ]);
  const [count] = await rows<{ n: string }>(`SELECT count(*) AS n FROM contacts WHERE tenant_id = :t`, {
    t: w.tenantId,
  });
  assert.is(Number(count.n), 2 + 3996);
});

test('a big import counts every row; errors are listed by line, the first MAX_LISTED_ERRORS of them', async () => {
  const w = await createWorld(ctx.app);
  await put(w.asKey, { email: 'taken@example.com', externalId: 'OWNER' });
  const total = 12 * IMPORT_CHUNK_ROWS;
  const badLines: number[] = [];
  const data: string[] = [];
  for (let i = 0; i < total; i += 1) {
    const line = i + 2; // the header is line 1
    if (i % 10 === 7) {
      data.push(`not-an-address-${i},,`);
      badLines.push(line);
    } else if (i === 1503 || i === 5004) {
      // Written, then refused by the database's answer (another contact has the address).
      data.push(`taken@example.com,OTHER-${i},`);
      badLines.push(line);
    } else if (i >= total - 500) {
      data.push(`big${i - 6000}@example.com,,Again`); // the same contacts as rows 5,500–5,999
    } else data.push(`big${i}@example.com,,Once`);
  }
  const res = await importCsv(w.asKey, ['email,externalId,firstName', ...data]);
  assert.is(res.statusCode, 200, res.body);
  const body = res.json();
  const failed = badLines.length;
  const again = data.slice(total - 500).filter((row) => row.endsWith('Again')).length;
  assert.is(failed, 1202);
  assert.equal(
    [body.rows, body.created, body.updated, body.failed, body.aborted],
    [total, total - failed - again, again, failed, null],
  );
  assert.is(body.errors.length, MAX_LISTED_ERRORS);
  assert.is(body.errorsOmitted, failed - MAX_LISTED_ERRORS);
  assert.equal(
    body.errors.map((e: { line: number }) => e.line),
    badLines.slice(0, MAX_LISTED_ERRORS),
  );
  assert.match(body.errors.find((e: { line: number }) => e.line === 1505).error, /belongs to the contact/);
  const [count] = await rows<{ n: string; again: string }>(
    `SELECT count(*) AS n, count(*) FILTER (WHERE first_name = 'Again') AS again FROM contacts WHERE tenant_id = :t`,
    { t: w.tenantId },
  );
  assert.equal([Number(count.n), Number(count.again)], [1 + body.created, again]);
});

test.run();
