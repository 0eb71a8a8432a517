// At-least-once delivery across a crash: hundreds of sends accepted by the real daemon, the daemon
// SIGKILLed while the queue drains to a slow SMTP server, started again on the same database. Every
// accepted email ends SENT, every Message-ID arrives, and a message sent twice (delivered, then the
// crash came before the log said SENT) carries the Message-ID fixed at accept time, so the
// receiver can recognise the duplicate. Nothing is left in jobs or failed_jobs.
//
// The killed daemon's leases must run out before its in-flight jobs are reclaimed: with the production
// default (60 s) this file waited a minute for nothing, so both daemons run with a 10 s lease
// (JOB_LEASE_MS), extended every third of it as in production. On a quiet machine the file takes
// about 25 s; on a loaded one each boot of the daemon alone can take half a minute, hence a hard cap.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SMTPServer } from 'smtp-server';
import { loadConfig } from '../daemon/config.ts';
import { sendWorkerConcurrency } from '../daemon/jobs/tuning.ts';
import {
  api,
  countRows,
  killAllDaemons,
  openWorldDatabase,
  seedSendWorld,
  startChildDaemon,
  stopChildDaemon,
  type SendWorld,
} from './helpers/send-daemon.ts';
import { waitFor } from './helpers/wait.ts';

// The embedded PGlite accepts sends many times slower than PostgreSQL (one WASM backend behind a
// socket, and its start and migrations take tens of seconds on a busy machine): 50 sends still
// leave work in flight at the kill and keep the file inside its bound.
const SENDS = process.env.DATABASE_URL ? 300 : 50;
const SINK_DELAY_MS = 20;
const LEASE_MS = '10000';
const TIME_BOUND_MS = process.env.DATABASE_URL ? 150_000 : 240_000;

interface Received {
  messageId: string;
  at: number;
}

/** An SMTP server that takes SINK_DELAY_MS to accept each message and keeps only its Message-ID. */
async function startSlowSink() {
  const received: Received[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const head = Buffer.concat(chunks).toString('utf8').split('\r\n\r\n')[0];
        const messageId = /^Message-ID:\s*(<[^>]+>)/im.exec(head)?.[1] ?? '(none)';
        // Recorded once the whole message is in: a crash before our 250 reaches the client is the
        // classic way a relay ends up with the message twice.
        received.push({ messageId, at: Date.now() });
        setTimeout(() => callback(), SINK_DELAY_MS);
      });
    },
  });
  // The killed daemon's connections end with ECONNRESET: expected, not a failure of the sink.
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.server.address() as { port: number }).port,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const startedAt = Date.now();
const phases: string[] = [];
const phase = (name: string) => phases.push(`${name} ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);

let sink: Awaited<ReturnType<typeof startSlowSink>> | null = null;
let world: SendWorld | null = null;
const watchdog = setTimeout(() => {
  killAllDaemons();
  console.error(`send-crash: over the ${TIME_BOUND_MS / 1000} s bound; daemons killed (${phases.join(', ')})`);
  process.exit(1);
}, TIME_BOUND_MS + 10_000);
watchdog.unref();

test.after(async () => {
  killAllDaemons();
  await sink?.close();
  await world?.database.drop();
  clearTimeout(watchdog);
});

/** Runs `task(i)` for i in [0, count) with at most `width` at a time. */
async function inParallel(count: number, width: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

test(`kill -9 while ${SENDS} sends drain: after a restart all are SENT, every Message-ID arrived, duplicates are recognisable`, async () => {
  const remaining = () => TIME_BOUND_MS - (Date.now() - startedAt);
  sink = await startSlowSink();
  world = await seedSendWorld({ SMTP_URL: `smtp://127.0.0.1:${sink.port}`, LOG_LEVEL: 'warn', JOB_LEASE_MS: LEASE_MS });
  phase('seeded');
  const first = await startChildDaemon(world);
  phase('ready');

  const accepted = new Map<string, string>(); // messageId → email id
  await inParallel(SENDS, 16, async (i) => {
    const res = await api(world!, 'POST', '/emails/send', {
      from: 'Acme <app@acme.test>',
      to: `user${i}@example.test`,
      subject: `Crash test ${i}`,
      textBody: `message ${i}`,
    });
    assert.is(res.status, 202, JSON.stringify(res.body));
    assert.is(res.body.status, 'QUEUED');
    accepted.set(res.body.messageId, res.body.id);
  });
  assert.is(accepted.size, SENDS, 'every send got its own Message-ID');
  phase('accepted');

  first.child.kill('SIGKILL');
  assert.is(await first.exit, null, 'killed by the signal, not exited');
  const deliveredBeforeKill = sink.received.length;
  assert.ok(
    deliveredBeforeKill < SENDS,
    `the kill came while the queue was still draining (${deliveredBeforeKill}/${SENDS} delivered)`,
  );

  phase(`killed with ${deliveredBeforeKill} delivered`);
  const second = await startChildDaemon(world);
  phase('restarted');
  const unique = () => new Set(sink!.received.map((r) => r.messageId));
  await waitFor(
    `all ${SENDS} Message-IDs at the sink (lease of the killed daemon must expire)`,
    () => unique().size >= SENDS,
    { timeoutMs: remaining() - 5_000, intervalMs: 250 },
  ).catch((error: Error) => {
    throw new Error(`${error.message} (${unique().size} arrived; ${phases.join(', ')})`);
  });
  phase('all arrived');
  await waitFor(
    'every log SENT',
    async () => (await api(world!, 'GET', '/emails/logs?status=SENT&limit=1')).body.meta.total === SENDS,
    { timeoutMs: Math.max(1_000, remaining() - 3_000), intervalMs: 250 },
  );
  assert.is(await stopChildDaemon(second), 0, second.output());

  // At-least-once: nothing unknown, nothing missing; a second copy repeats a Message-ID already seen.
  const seen = new Set<string>();
  const duplicates: string[] = [];
  for (const { messageId } of sink.received) {
    assert.ok(accepted.has(messageId), `the sink received ${messageId}, which no 202 answered`);
    if (seen.has(messageId)) duplicates.push(messageId);
    seen.add(messageId);
  }
  assert.is(seen.size, SENDS, 'every accepted Message-ID arrived');
  // Only messages in flight at the kill can arrive twice: at most the send worker's concurrency.
  const inFlightBound = sendWorkerConcurrency(loadConfig({ ...process.env, ...world.env }));
  assert.ok(duplicates.length <= inFlightBound, `${duplicates.length} duplicates (bound ${inFlightBound})`);

  const db = await openWorldDatabase(world);
  try {
    const ids = [...accepted.values()];
    assert.is(
      await countRows(db, `SELECT count(*) FROM email_logs WHERE id IN (:ids) AND status = 'SENT'`, { ids }),
      SENDS,
    );
    assert.is(await countRows(db, `SELECT count(*) FROM email_logs`), SENDS, 'no log beyond the accepted ones');
    assert.is(
      await countRows(db, `SELECT count(*) FROM email_events WHERE type = 'sent'`),
      SENDS,
      'one sent event per log',
    );
    // A message delivered twice was attempted again after the crash.
    if (duplicates.length) {
      const twice = duplicates.map((messageId) => accepted.get(messageId)!);
      assert.is(
        await countRows(db, `SELECT count(*) FROM email_logs WHERE id IN (:twice) AND attempts >= 2`, { twice }),
        new Set(twice).size,
      );
    }
    assert.is(await countRows(db, `SELECT count(*) FROM jobs`), 0, 'no job left');
    assert.is(await countRows(db, `SELECT count(*) FROM failed_jobs`), 0, 'no failed job');
  } finally {
    await db.close();
  }
  phase('checked');
  console.log(`send-crash: ${SENDS} sends, ${duplicates.length} duplicates; ${phases.join(', ')}`);
});

test.run();
