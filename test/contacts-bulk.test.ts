// POST /contacts/bulk written set-wise (daemon/modules/contacts/bulk.ts): the same per-row answers
// and matching rules as PUT /contacts row by row, at a thousand rows per request.
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

function bulk(headers: Record<string, string>, contacts: unknown[]) {
  return ctx.app.inject({ method: 'POST', url: '/contacts/bulk', headers, payload: { contacts } });
}

test('a thousand rows are created, then updated: omitted fields kept, tags replaced, attributes replaced', async () => {
  const w = await createWorld(ctx.app);
  const first = Array.from({ length: 1000 }, (_, i) => ({
    email: `Person${i}@Example.com`,
    firstName: `First${i}`,
    tags: ['old', 'kept'],
    attributes: { plan: 'a', i },
    ...(i % 2 === 0 ? { externalId: `ext-${i}` } : {}),
  }));
  const created = (await bulk(w.asKey, first)).json();
  assert.equal([created.created, created.updated, created.failed], [1000, 0, 0]);
  assert.equal(
    created.results.map((r: { index: number }) => r.index),
    first.map((_, i) => i),
  );

  const second = Array.from({ length: 1000 }, (_, i) => ({
    email: `person${i}@example.com`,
    lastName: `Last${i}`,
    tags: ['kept', 'new'],
    attributes: { plan: 'b' },
    optIn: true,
  }));
  const updated = (await bulk(w.asKey, second)).json();
  assert.equal([updated.created, updated.updated, updated.failed], [0, 1000, 0]);
  assert.equal(
    updated.results.map((r: { id: string }) => r.id),
    created.results.map((r: { id: string }) => r.id),
    'matched by email, case-insensitively',
  );

  const [row] = await rows<Record<string, unknown>>(
    `SELECT email, external_id, first_name, last_name, opt_in, attributes FROM contacts WHERE id = :id`,
    { id: created.results[4].id },
  );
  assert.equal(row, {
    email: 'person4@example.com',
    external_id: 'ext-4',
    first_name: 'First4',
    last_name: 'Last4',
    opt_in: true,
    attributes: { plan: 'b' },
  });
  const tags = await rows<{ name: string }>(
    `SELECT t.name FROM contact_tag_links l JOIN contact_tags t ON t.id = l.tag_id WHERE l.contact_id = :id ORDER BY t.name`,
    { id: created.results[4].id },
  );
  assert.equal(
    tags.map((t) => t.name),
    ['kept', 'new'],
  );
  const [counts] = await rows<{ contacts: string; links: string; tags: string }>(
    `SELECT (SELECT count(*) FROM contacts WHERE tenant_id = :t) AS contacts,
            (SELECT count(*) FROM contact_tag_links l JOIN contacts c ON c.id = l.contact_id WHERE c.tenant_id = :t) AS links,
            (SELECT count(*) FROM contact_tags WHERE tenant_id = :t) AS tags`,
    { t: w.tenantId },
  );
  assert.equal([Number(counts.contacts), Number(counts.links), Number(counts.tags)], [1000, 2000, 3]);
});

test('rows of one request are applied in order, as PUT /contacts one after the other would', async () => {
  const w = await createWorld(ctx.app);
  const res = (
    await bulk(w.asKey, [
      { email: 'x@example.com', externalId: 'e1', firstName: 'X' },
      { email: 'y@example.com', externalId: 'e1' },
      { email: 'x@example.com', firstName: 'Fresh' },
      { email: 'Y@example.com', lastName: 'Moved' },
      { email: 'z@example.com', externalId: 'e3' },
      { email: 'z@example.com', externalId: 'e4' },
      { email: 'y@example.com', externalId: 'e3' },
    ])
  ).json();
  assert.equal(
    res.results.map((r: { status: string }) => r.status),
    ['created', 'updated', 'created', 'updated', 'created', 'error', 'error'],
  );
  assert.is(res.results[1].id, res.results[0].id, 'e1 moved to y@');
  assert.is.not(res.results[2].id, res.results[0].id, 'x@ was free again: a new contact');
  assert.is(res.results[3].id, res.results[0].id);
  assert.match(res.results[5].error, /belongs to the contact with externalId "e3", not "e4"/);
  assert.match(res.results[6].error, /already has the address y@example.com/);
  const contacts = await rows<{
    email: string;
    external_id: string | null;
    first_name: string | null;
    last_name: string | null;
  }>(
    `SELECT email, external_id, first_name, last_name FROM contacts WHERE tenant_id = :t ORDER BY lower(email) COLLATE "C"`,
    { t: w.tenantId },
  );
  assert.equal(contacts, [
    { email: 'x@example.com', external_id: null, first_name: 'Fresh', last_name: null },
    { email: 'Y@example.com', external_id: 'e1', first_name: 'X', last_name: 'Moved' },
    { email: 'z@example.com', external_id: 'e3', first_name: null, last_name: null },
  ]);
});

test('two requests racing over the same new addresses create each contact once', async () => {
  const w = await createWorld(ctx.app);
  const contacts = Array.from({ length: 300 }, (_, i) => ({ email: `race${i}@example.com`, tags: ['race'] }));
  const [a, b] = await Promise.all([bulk(w.asKey, contacts), bulk(w.asKey, contacts)]);
  for (const res of [a, b]) assert.is(res.statusCode, 200, res.body);
  const bodies = [a.json(), b.json()];
  assert.is(
    bodies[0].failed + bodies[1].failed,
    0,
    JSON.stringify(bodies.map((x) => x.results.find((r: { status: string }) => r.status === 'error'))),
  );
  assert.is(bodies[0].created + bodies[1].created, 300);
  assert.is(bodies[0].updated + bodies[1].updated, 300);
  const [n] = await rows<{ n: string }>(`SELECT count(*) AS n FROM contacts WHERE tenant_id = :t`, { t: w.tenantId });
  assert.is(Number(n.n), 300);
});

function importCsv(headers: Record<string, string>, csv: string, query = '') {
  return ctx.app.inject({
    method: 'POST',
    url: `/contacts/import${query}`,
    headers: { ...headers, 'content-type': 'text/csv' },
    payload: csv,
  });
}

test('POST /contacts/import reads a CSV stream with a column map; bad rows are reported by line and skipped', async () => {
  const w = await createWorld(ctx.app);
  const lines = [
    'E-mail,First,Plan,Opt In,Tags,locale',
    'ana@example.com,Ana,gold,yes,vip;news,es',
    'not-an-address,Bad,gold,yes,,',
    '',
    'bea@example.com,"Bea, ""the"" Second",silver,maybe,,en',
    '"cid@example.com","Multi',
    'line",bronze,0,news,xx-!!',
    'dan@example.com,Dan,,false,,',
  ];
  const query = '?map=email%3DE-mail&map=firstName%3DFirst&map=attributes.plan%3DPlan&map=optIn%3DOpt%20In';
  const res = await importCsv(w.asKey, lines.join('\r\n') + '\r\n', query);
  assert.is(res.statusCode, 200, res.body);
  const body = res.json();
  assert.equal([body.rows, body.created, body.updated, body.failed, body.aborted], [5, 2, 0, 3, null]);
  assert.equal(
    body.errors.map((e: { line: number }) => e.line),
    [3, 5, 7],
  );
  assert.match(body.errors[0].error, /email/);
  assert.match(body.errors[1].error, /optIn "maybe"/);
  assert.match(body.errors[2].error, /locale/);
  const contacts = await rows<{
    email: string;
    first_name: string;
    opt_in: boolean;
    locale: string | null;
    attributes: Record<string, string>;
  }>(`SELECT email, first_name, opt_in, locale, attributes FROM contacts WHERE tenant_id = :t ORDER BY email`, {
    t: w.tenantId,
  });
  assert.equal(contacts, [
    { email: 'ana@example.com', first_name: 'Ana', opt_in: true, locale: 'es', attributes: { plan: 'gold' } },
    { email: 'dan@example.com', first_name: 'Dan', opt_in: false, locale: null, attributes: { plan: '' } },
  ]);
  const tags = await rows<{ name: string }>(
    `SELECT t.name FROM contact_tag_links l JOIN contact_tags t ON t.id = l.tag_id JOIN contacts c ON c.id = l.contact_id WHERE c.email = 'ana@example.com' ORDER BY 1`,
  );
  assert.equal(
    tags.map((t) => t.name),
    ['news', 'vip'],
  );
});

test('POST /contacts/import: thousands of rows across chunks, the last row of a contact wins, a broken quote stops reading', async () => {
  const w = await createWorld(ctx.app);
  const data = Array.from({ length: 2500 }, (_, i) => `p${i}@example.com,First${i},true`);
  data.push('p0@example.com,Last word,false');
  const res = await importCsv(w.asKey, ['email,firstName,optIn', ...data].join('\n'));
  const body = res.json();
  assert.equal([body.rows, body.created, body.updated, body.failed], [2501, 2500, 1, 0]);
  const [p0] = await rows<{ first_name: string; opt_in: boolean }>(
    `SELECT first_name, opt_in FROM contacts WHERE tenant_id = :t AND email = 'p0@example.com'`,
    { t: w.tenantId },
  );
  assert.equal(p0, { first_name: 'Last word', opt_in: false });

  const broken = await importCsv(w.asKey, 'email\nq1@example.com\n"q2@example.com\nq3@example.com\n');
  assert.is(broken.statusCode, 200);
  assert.is(broken.json().created, 1);
  assert.match(broken.json().aborted, /could not be read further/);

  const noEmail = await importCsv(w.asKey, 'name\nAna\n');
  assert.is(noEmail.statusCode, 400);
  assert.match(noEmail.json().message, /email/);
  const badMap = await importCsv(w.asKey, 'email\na@example.com\n', '?map=colour%3Demail');
  assert.is(badMap.statusCode, 400);
  const json = await ctx.app.inject({
    method: 'POST',
    url: '/contacts/import',
    headers: w.asKey,
    payload: { email: 'a@example.com' },
  });
  assert.is(json.statusCode, 415);
  assert.is(json.json().code, 'UNSUPPORTED_MEDIA_TYPE');
});

// The import writes several chunks at once (daemon/modules/contacts/import-writer.ts): its answer and
// contacts must be those of a file written one chunk after the other.
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
  const res = await importCsv(w.asKey, ['email,externalId,firstName', ...data].join('\n') + '\n');
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
  const res = await importCsv(w.asKey, ['email,externalId,firstName', ...data].join('\n') + '\n');
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
