// Inbound routing end to end (issue 52), what holds a message back and what keeps it (world:
// helpers/inbound-routing-world.ts): store routes and the token address (search, cursor paging, rotation),
// forward routes, a dead database (451, never a wrong answer), retention, size limits at the end of DATA,
// rates at RCPT TO.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Sequelize } from 'sequelize';
import { createWorld } from './helpers/fixtures.ts';
import { freePort, swaks } from './helpers/swaks.ts';
import { assertErrorBody } from './helpers/error-body.ts';
import { createInboundServer } from '../daemon/smtp/inbound.ts';
import { enforceRetention } from '../daemon/modules/retention/enforce.ts';
import {
  addRoute,
  api,
  ctx,
  inbound,
  q,
  scratch,
  send,
  setUp,
  tearDown,
  verifiedDomain,
  world,
} from './helpers/inbound-routing-world.ts';

test.before(async () => {
  await setUp();
  await verifiedDomain('support.acme.example');
});
test.after(tearDown);

test('store route and the token address: kept for the API, searchable, paged by cursor; mixed with a report address', async () => {
  const address = await api('GET', '/inbound/address');
  const token = address.json().address.split('@')[0] as string;
  assert.match(token, /^[a-z2-7]{16}$/);
  assert.is(address.json().domain, 'inbound.mail.example.test');
  await addRoute({ address: `${token}+*@inbound.mail.example.test`, action: 'store' });
  for (const n of [1, 2, 3]) {
    const run = await send([`${token}+order-${n}@inbound.mail.example.test`], ['--header', `Subject: receipt ${n}`]);
    assert.match(run.output, /<-  250 Accepted: routed \(1\)/, run.output);
  }
  // One message to a report address of ours and a routed address: both handled, read once.
  const mixed = await send(
    ['dmarc-reports@mail.example.test', `${token}+mixed@inbound.mail.example.test`],
    ['--header', 'Subject: receipt mixed'],
  );
  assert.match(mixed.output, /<-  250 Accepted: .*routed \(1\)/, mixed.output);

  const first = await api('GET', '/inbound/messages?subject=receipt&status=stored&limit=2');
  assert.is(first.statusCode, 200, first.body);
  assert.equal(
    first.json().data.map((m: { subject: string }) => m.subject),
    ['receipt mixed', 'receipt 3'],
  );
  assert.is(first.json().data[1].mailboxHash, 'order-3');
  const second = await api('GET', `/inbound/messages?subject=receipt&limit=2&cursor=${first.json().meta.nextCursor}`);
  assert.equal(
    second.json().data.map((m: { subject: string }) => m.subject),
    ['receipt 2', 'receipt 1'],
  );
  const byTo = await api('GET', `/inbound/messages?to=${token}%2Border-2@inbound.mail.example.test`);
  assert.is(byTo.json().data.length, 1);
  const storedId = byTo.json().data[0].id as string;
  const storedRow = () =>
    q<{ status: string; event_id: string | null }>(`SELECT status, event_id FROM inbound_messages WHERE id = :id`, {
      id: storedId,
    });
  const replayStore = await api('POST', `/inbound/messages/${storedId}/replay`);
  assert.match(assertErrorBody(replayStore, 409, 'CONFLICT').message, /\(store\) has no endpoint to replay it to/);
  assert.equal(await storedRow(), [{ status: 'stored', event_id: null }], 'nothing replayed');
  const other = await createWorld(ctx.app);
  assertErrorBody(await api('GET', `/inbound/messages/${storedId}`, undefined, other.asKey), 404, 'NOT_FOUND');
  assertErrorBody(await api('GET', `/inbound/messages/${storedId}/raw`, undefined, other.asKey), 404, 'NOT_FOUND');
  assertErrorBody(await api('POST', `/inbound/messages/${storedId}/replay`, undefined, other.asKey), 404, 'NOT_FOUND');
  assert.equal(await storedRow(), [{ status: 'stored', event_id: null }], "another tenant's replay did nothing");

  // Rotation: the old token is refused at RCPT, the routes moved to the new one.
  const rotated = await api('POST', '/inbound/address/rotate');
  const newToken = rotated.json().address.split('@')[0];
  assert.is.not(newToken, token);
  const old = await send([`${token}+late@inbound.mail.example.test`]);
  assert.match(old.output, /<\*\* 550/);
  const fresh = await send([`${newToken}+late@inbound.mail.example.test`]);
  assert.match(fresh.output, /<-  250 /, fresh.output);
});

test('forward route: the message is queued for sending in the transaction that stores it', async () => {
  await addRoute({ address: 'fwd@support.acme.example', action: 'forward', forwardTo: 'desk@elsewhere.example' });
  const run = await send(['fwd@support.acme.example'], ['--header', 'Subject: pass it on']);
  assert.match(run.output, /<-  250 Accepted: routed \(1\)/, run.output);
  const [row] = await q<{ id: string; status: string }>(
    `SELECT id, status FROM inbound_messages WHERE recipient = 'fwd@support.acme.example'`,
  );
  assert.is(row.status, 'forwarded');
  const jobs = await q<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE queue = 'system'`);
  assert.ok(jobs[0].n >= 1, 'a system-mail job carries the forward');
});

test('a database that cannot answer gives 451 at RCPT TO, never 250 nor 550', async () => {
  const dead = new Sequelize('postgres://svc@127.0.0.1:1/none', {
    dialect: 'postgres',
    logging: false,
    pool: { max: 1, acquire: 2000 },
  });
  const server = createInboundServer({
    config: ctx.config,
    db: { sequelize: dead, url: 'postgres://svc@127.0.0.1:1/none', embedded: true },
    secrets: ctx.deps.secrets,
    log: { info: () => {}, warn: () => {} },
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  try {
    const run = await swaks(port, ['--from', 'ann@sender.example', '--to', 'someone@support.acme.example']);
    assert.match(run.output, /<\*\* 451 Temporary failure looking up the recipient/, run.output);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await dead.close();
  }
});

test('retention: messages past the raw-message horizon go, with their stored attachments', async () => {
  const [old] = await q<{ id: string }>(
    `INSERT INTO inbound_messages (tenant_id, action, status, recipient, size, raw_gzip, parsed, created_at)
     VALUES (:t, 'store', 'stored', 'old@support.acme.example', 1, '\\x00', '{}', now() - interval '400 days')
     RETURNING id`,
    { t: world.tenantId },
  );
  await ctx.db.sequelize.query(
    // The message's own created_at (a JS Date would lose its microseconds), as receive.ts writes both.
    `INSERT INTO inbound_attachments (created_at, tenant_id, inbound_id, sha256, content)
     SELECT created_at, tenant_id, id, 'x', '\\x00' FROM inbound_messages WHERE id = :id`,
    { replacements: { id: old.id } },
  );
  const report = await enforceRetention(ctx.db.sequelize);
  assert.ok(report.rowsDeleted.inbound_messages >= 1, JSON.stringify(report));
  assert.equal(await q(`SELECT id FROM inbound_messages WHERE id = :id`, { id: old.id }), []);
  assert.equal(await q(`SELECT id FROM inbound_attachments WHERE inbound_id = :id`, { id: old.id }), []);
  const kept = await q<{ n: number }>(`SELECT count(*)::int AS n FROM inbound_messages`);
  assert.ok(kept[0].n > 0, 'recent messages stay');
});

test("a message larger than the recipient's plan takes is refused at the end of DATA (552), nothing stored", async () => {
  await addRoute({ address: 'big@support.acme.example', action: 'store' });
  const file = join(scratch, 'big.bin');
  writeFileSync(file, randomBytes(6 * 1024 * 1024));
  const run = await send(
    ['big@support.acme.example'],
    ['--attach-type', 'application/octet-stream', '--attach', `@${file}`],
  );
  assert.match(
    run.output,
    /<\*\* 552 Message exceeds the 5242880 bytes its recipient accepts/,
    run.output.slice(-2000),
  );
  assert.equal(await q(`SELECT id FROM inbound_messages WHERE recipient = 'big@support.acme.example'`), []);
});

test("an attachment larger than the recipient's plan takes per attachment is refused at the end of DATA (552)", async () => {
  await addRoute({ address: 'files@support.acme.example', action: 'store' });
  // 3 MiB: under the free plan's 5 MiB a message, over its 2 MiB an attachment.
  const file = join(scratch, 'three-mib.bin');
  writeFileSync(file, randomBytes(3 * 1024 * 1024));
  const run = await send(
    ['files@support.acme.example'],
    ['--attach-type', 'application/octet-stream', '--attach', `@${file}`],
  );
  assert.match(
    run.output,
    /<\*\* 552 An attachment of 3145728 bytes exceeds the 2097152 bytes per attachment its recipient accepts/,
    run.output.slice(-2000),
  );
  assert.equal(await q(`SELECT id FROM inbound_messages WHERE recipient = 'files@support.acme.example'`), []);
  // Under the limit, the same route takes it.
  writeFileSync(file, randomBytes(1024 * 1024));
  const ok = await send(
    ['files@support.acme.example'],
    ['--attach-type', 'application/octet-stream', '--attach', `@${file}`],
  );
  assert.match(ok.output, /<-  250 Accepted: routed \(1\)/, ok.output.slice(-2000));
});

test('RCPT TO: a sender past its rate and a tenant past its day get 451, counted in Redis as the API limits', async () => {
  const redis = ctx.deps.redis;
  if (!redis) {
    console.log('  (limits counted in this process: REDIS_URL is not set, nothing to fill from here)');
    return;
  }
  await addRoute({ address: 'limits@support.acme.example', action: 'store' });
  const key = (name: string) => `${ctx.deps.redisPrefix}inbound:rl:${name}`;
  await redis.set(key('from:spammer@sender.example'), '120', 'PX', 60_000);
  const spammer = await swaks(inbound.port, [
    '--from',
    'spammer@sender.example',
    '--to',
    'limits@support.acme.example',
  ]);
  assert.match(spammer.output, /<\*\* 451 Too many messages from <spammer@sender\.example>: at most 120 a minute/);
  assert.not.match(spammer.output, /^<- +354 /m);

  await redis.set(key(`tenant:${world.tenantId}`), '100', 'PX', 60_000);
  try {
    const daily = await send(['limits@support.acme.example']);
    assert.match(daily.output, /<\*\* 451 This recipient's service has received its 100 messages for today/);
  } finally {
    await redis.del(key(`tenant:${world.tenantId}`));
  }
  const ok = await send(['limits@support.acme.example']);
  assert.match(ok.output, /<-  250 /);
  assert.is(await redis.get(key(`tenant:${world.tenantId}`)), '1', 'the stored message counted');
});

test.run();
