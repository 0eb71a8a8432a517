// The embedded database's wire-protocol server (daemon/db/pglite-server.ts) serves every `npm start`:
// several pg clients share PGlite's ONE backend session through it. These tests drive it with real
// `pg` clients and check the two rules its header states: message groups never interleave, and an
// open transaction keeps the session to its client (rolled back when that client goes away).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { servePglite, type PgliteServer } from '../daemon/db/pglite-server.ts';

let db: PGlite;
let server: PgliteServer;
const open: pg.Client[] = [];

async function client(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${server.port}/postgres` });
  c.on('error', () => {}); // a client we kill on purpose reports its own socket's end
  await c.connect();
  open.push(c);
  return c;
}

test.before(async () => {
  db = await PGlite.create();
  server = await servePglite(db);
  await db.exec('CREATE TABLE items (id int PRIMARY KEY, owner text NOT NULL)');
});

test.after(async () => {
  await Promise.all(open.map((c) => c.end().catch(() => {})));
  await server.close();
  await db.close();
});

test.before.each(async () => {
  await db.exec('DELETE FROM items');
});

/** Runs `count` queries one after another on one client (pg runs one query at a time per client). */
async function sequence<T>(count: number, run: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < count; i++) out.push(await run(i));
  return out;
}

test('clients interleaving extended-protocol queries each get their own answers', async () => {
  const clients = await Promise.all([client(), client(), client(), client()]);
  // Unnamed statements (Parse/Bind/Execute/Sync) from four clients in flight at once: if their
  // messages were interleaved on the one backend session, a Bind would meet another's Parse.
  const answers = await Promise.all(
    clients.map((c, who) =>
      sequence(50, (n) =>
        c
          .query<{ who: number; doubled: number }>('SELECT $1::int AS who, $2::int * 2 AS doubled', [who, n])
          .then((r) => r.rows[0]),
      ),
    ),
  );
  answers.forEach((rows, who) => rows.forEach((row, n) => assert.equal(row, { who, doubled: n * 2 })));
  // A named prepared statement lives in the one backend session, so only one client may own a name
  // (daemon/db/sql.ts runs its statements unnamed on PGlite for that reason); that client reuses it
  // with Bind/Execute only while the others keep sending unnamed statements around it.
  const [owner, ...rest] = clients;
  const [named] = await Promise.all([
    sequence(25, (n) =>
      owner.query({ name: 'double', text: 'SELECT $1::int * 2 AS d', values: [n] }).then((r) => r.rows[0].d),
    ),
    ...rest.map((c) => sequence(25, (n) => c.query('SELECT $1::int AS n', [n]))),
  ]);
  assert.equal(
    named,
    Array.from({ length: 25 }, (_, n) => n * 2),
  );
});

test("an error in one client does not disturb the other (the backend skips to that client's Sync only)", async () => {
  const [a, b] = [await client(), await client()];
  const [errors, values] = await Promise.all([
    sequence(20, () =>
      a.query('SELECT 1 / $1::int', [0]).then(
        () => 'ok',
        (e: Error) => e.message,
      ),
    ),
    sequence(20, (i) => b.query('SELECT $1::int + 1 AS n', [i]).then((r) => r.rows[0].n)),
  ]);
  assert.ok(
    errors.every((m) => /division by zero/.test(m)),
    errors.join(';'),
  );
  assert.equal(
    values,
    Array.from({ length: 20 }, (_, i) => i + 1),
  );
  // Both clients are usable afterwards.
  assert.is((await a.query('SELECT 7 AS n')).rows[0].n, 7);
});

test('an open transaction keeps the session to its client: another client waits until it commits', async () => {
  const [a, b] = [await client(), await client()];
  await a.query('BEGIN');
  await a.query("INSERT INTO items VALUES (1, 'a')");
  // On the shared session b would see a's uncommitted row (count 1) if it ran now; it must wait.
  const seenByB = b.query<{ n: string }>('SELECT count(*) AS n FROM items');
  await a.query("INSERT INTO items VALUES (2, 'a')");
  await a.query('COMMIT');
  assert.is(Number((await seenByB).rows[0].n), 2);
});

test('a client that disconnects mid-transaction has it rolled back, and the others go on', async () => {
  const [a, b] = [await client(), await client()];
  await a.query('BEGIN');
  await a.query("INSERT INTO items VALUES (10, 'gone')");
  const waiting = b.query<{ n: string }>("SELECT count(*) AS n FROM items WHERE owner = 'gone'");
  // Kill a's socket without a Terminate message, as a crashed process would.
  (a as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
  assert.is(Number((await waiting).rows[0].n), 0);
  assert.is(db.isInTransaction(), false);
  const rows = await b.query("INSERT INTO items VALUES (11, 'b') RETURNING id");
  assert.is(rows.rows[0].id, 11);
});

test('a client inside a transaction can run many groups while the others queue behind it', async () => {
  const [a, b, c] = [await client(), await client(), await client()];
  await a.query('BEGIN');
  const others = Promise.all([
    b.query("INSERT INTO items VALUES (100, 'b') RETURNING id"),
    c.query<{ n: string }>('SELECT count(*) AS n FROM items'),
  ]);
  for (let i = 0; i < 20; i++) await a.query("INSERT INTO items VALUES ($1, 'a')", [i]);
  await a.query('ROLLBACK');
  const [inserted, counted] = await others;
  assert.is(inserted.rows[0].id, 100);
  // c ran after a's rollback: none of a's 20 rows, and b's row only if b ran first.
  assert.ok([0, 1].includes(Number(counted.rows[0].n)));
  const final = await b.query<{ owner: string }>('SELECT owner FROM items ORDER BY id');
  assert.equal(
    final.rows.map((r) => r.owner),
    ['b'],
  );
});

test.run();
