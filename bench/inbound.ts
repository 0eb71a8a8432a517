// `npm run bench:inbound` (issue 52 §5): DKIM-signed messages of about 50 KB with two attachments, from
// three sender domains whose keys, SPF and DMARC records the test DNS server serves (so the verdicts are
// real work), injected over INJECT_CONNECTIONS SMTP connections by a child process, through the inbound
// listener, the reader thread, the routing and the webhook worker's own dispatcher to a local webhook
// receiver. A message counts when the receiver answered 2xx for it and its inbound row says delivered.
// Baseline in the same run, injected the same way: bare smtp-server + mailparser in this process.
// The event-loop delay is read in the process that runs the listener, the routing and the dispatcher.
// Before the measured run, one message per core is sent at once and delivered, so that the reader
// threads' cold start stays out of it; the CPU split names each busy thread's share (the reader
// threads, V8's helper threads).
//
// Goal: ≥ 200 messages/s on 2 cores, event-loop max delay ≤ 50 ms meanwhile.
// BENCH_INBOUND_MESSAGES (default 2,000) sets the count.
import { fork } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import nodemailer from 'nodemailer';
import { SMTPServer } from 'smtp-server';
import { simpleParser } from 'mailparser';
import { QueryTypes } from 'sequelize';
import { machineInfo } from './machine.ts';
import { resultsFile } from './results-file.ts';
import { cpuTimeMs } from './children.ts';

const SENDERS = ['alpha.example', 'beta.example', 'gamma.example'];
const CONNECTIONS = 10;
const COUNT = Number(process.env.BENCH_INBOUND_MESSAGES ?? 2_000);

interface InjectResult {
  accepted: number;
  failures: number;
  firstError?: string;
  seconds: number;
  /** The injector's own CPU while it sent (user + system), ms. */
  cpuMs: number;
}

/**
 * CPU used so far (ms): this process's main thread and its other threads (the reader thread, V8's GC
 * helpers, libuv's pool), and the PostgreSQL backends serving `database` (its process titles name it).
 * Wall time on a shared machine says little; CPU per message says what 2 cores can carry.
 */
function cpuNow(database: string | null) {
  const process_ = process.cpuUsage();
  // The main thread alone: its task's stat (the process's own stat sums every thread).
  const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const main = (Number(fields[11]) + Number(fields[12])) * 10;
  let postgres = 0;
  if (database)
    for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
      let title = '';
      try {
        title = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      } catch {
        continue;
      }
      if (title.startsWith('postgres: ') && title.split(' ').includes(database))
        postgres += cpuTimeMs(Number(pid)) ?? 0;
    }
  return {
    processMs: (process_.user + process_.system) / 1000,
    mainMs: main,
    postgresMs: postgres,
    threads: threadsMs(),
  };
}

/** CPU so far (ms) of each of this process's threads but the main one, by thread id (/proc, 10 ms ticks). */
function threadsMs(): Map<string, number> {
  const threads = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    if (tid === String(process.pid)) continue;
    try {
      const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
      threads.set(tid, (Number(fields[11]) + Number(fields[12])) * 10);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return threads;
}

/** CPU per message between two cpuNow readings (the main thread from /proc, in 10 ms ticks). */
function cpuPerMessage(
  before: ReturnType<typeof cpuNow>,
  after: ReturnType<typeof cpuNow>,
  messages: number,
  injector: number,
) {
  const per = (ms: number) => Math.round((ms / messages) * 100) / 100;
  return {
    processMsPerMessage: per(after.processMs - before.processMs),
    mainThreadMsPerMessage: per(after.mainMs - before.mainMs),
    otherThreadsMsPerMessage: per(after.processMs - before.processMs - (after.mainMs - before.mainMs)),
    postgresBackendsMsPerMessage: per(after.postgresMs - before.postgresMs),
    injectorMsPerMessage: per(injector),
    /**
     * The busiest other threads, each alone (the reader threads, V8's helpers; unnamed in /proc), those
     * above 0.1 ms a message: how the reader's work is spread.
     */
    busiestThreadsMsPerMessage: [...after.threads]
      .map(([tid, ms]) => per(ms - (before.threads.get(tid) ?? 0)))
      .filter((ms) => ms > 0.1)
      .sort((a, b) => b - a),
  };
}

/** The injector child: builds the signed messages first, then sends them over CONNECTIONS connections. */
async function injectChild(): Promise<void> {
  const { port, to, keys, count } = JSON.parse(process.env.INBOUND_INJECT!) as {
    port: number;
    to: string[];
    keys: Record<string, string>;
    count: number;
  };
  const build = nodemailer.createTransport({ streamTransport: true, buffer: true });
  const raws: { from: string; to: string; raw: Buffer }[] = [];
  const text = 'Hello,\n\n' + 'this is the reply body of a bench message. '.repeat(40);
  for (let i = 0; i < count; i++) {
    const domain = SENDERS[i % SENDERS.length];
    const from = `user${i}@${domain}`;
    const info = await build.sendMail({
      from,
      to: to[i % to.length],
      subject: `bench ${i}`,
      text,
      attachments: [
        { filename: 'a.bin', content: randomBytes(17_000) },
        { filename: 'b.pdf', content: randomBytes(17_000), contentType: 'application/pdf' },
      ],
      dkim: { domainName: domain, keySelector: 'bench', privateKey: keys[domain] },
    });
    raws.push({ from, to: to[i % to.length], raw: info.message as Buffer });
  }
  // One client address per connection (127.0.0.10…), as several sending servers: the listener's
  // per-IP limit (600 a minute) stays what it is.
  const transports = Array.from({ length: CONNECTIONS }, (_, c) =>
    nodemailer.createTransport({
      host: '127.0.0.1',
      port,
      secure: false,
      ignoreTLS: true,
      localAddress: `127.0.0.${10 + c}`,
      pool: true,
      maxConnections: 1,
      maxMessages: Infinity,
    }),
  );
  process.send!({ start: Date.now() });
  const cpuStart = process.cpuUsage();
  let next = 0;
  let accepted = 0;
  let failures = 0;
  let firstError: string | undefined;
  const started = performance.now();
  await Promise.all(
    transports.map(async (transport) => {
      while (next < raws.length) {
        const message = raws[next++];
        try {
          await transport.sendMail({ envelope: { from: message.from, to: [message.to] }, raw: message.raw });
          accepted++;
        } catch (error) {
          failures++;
          firstError ??= (error as Error).message;
        }
      }
    }),
  );
  for (const transport of transports) transport.close();
  const cpu = process.cpuUsage(cpuStart);
  const result: InjectResult = {
    accepted,
    failures,
    firstError,
    seconds: (performance.now() - started) / 1000,
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
  process.send!(result, () => process.exit(0));
}

function inject(
  port: number,
  to: string[],
  keys: Record<string, string>,
  count: number,
  onStart: (epochMs: number) => void,
): Promise<InjectResult> {
  const child = fork(fileURLToPath(import.meta.url), ['inject'], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, INBOUND_INJECT: JSON.stringify({ port, to, keys, count }) },
  });
  return new Promise((resolve, reject) => {
    child.on('message', (message: InjectResult | { start: number }) => {
      if ('start' in message) onStart(message.start);
      else resolve(message);
    });
    child.once('exit', (code) => code !== 0 && reject(new Error(`injector exited with ${code}`)));
  });
}

function delays() {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  return () => {
    histogram.disable();
    return { maxMs: Math.round(histogram.max / 1e5) / 10, p99Ms: Math.round(histogram.percentile(99) / 1e5) / 10 };
  };
}

async function waitUntil(what: string, test: () => Promise<boolean> | boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!(await test())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The baseline: smtp-server + mailparser, every message parsed, nothing else. */
async function baseline(keys: Record<string, string>) {
  let parsed = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, _session, callback) {
      simpleParser(stream).then(
        () => {
          parsed++;
          callback();
        },
        (error: Error) => callback(error),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;
  let stop = delays();
  let started = 0;
  let cpuBefore = cpuNow(null);
  const injected = await inject(port, ['someone@baseline.example'], keys, COUNT, (at) => {
    stop = delays();
    started = at;
    cpuBefore = cpuNow(null);
  });
  await waitUntil('every message parsed', () => parsed >= injected.accepted, 600_000);
  const seconds = (Date.now() - started) / 1000;
  const loop = stop();
  const cpu = cpuPerMessage(cpuBefore, cpuNow(null), injected.accepted, injected.cpuMs);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return { parsed, perSecond: Math.round(parsed / seconds), seconds, loop, cpu, injected };
}

/** `count` signed messages sent at once, each on its own connection; resolves to how many were accepted. */
async function warmUpMessages(port: number, to: string, keys: Record<string, string>, count: number) {
  const domain = SENDERS[0];
  const sent = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
      await transport.sendMail({
        from: `warm${i}@${domain}`,
        to,
        subject: `warm-up ${i}`,
        text: 'warm-up',
        attachments: [{ filename: 'a.bin', content: randomBytes(1_000) }],
        dkim: { domainName: domain, keySelector: 'bench', privateKey: keys[domain] },
      });
      transport.close();
    }),
  );
  return sent.length;
}

async function svc(keys: Record<string, string>, publicKeys: Record<string, string>) {
  const { startDnsServer } = await import('../test/helpers/dns-server.ts');
  const { startReceiver, createTestDispatcher } = await import('../test/helpers/webhook-receiver.ts');
  const { createTestContext } = await import('../test/helpers/context.ts');
  const { createWorld } = await import('../test/helpers/fixtures.ts');
  const { freePort } = await import('../test/helpers/swaks.ts');
  const { startInboundServer } = await import('../daemon/smtp/inbound.ts');
  const dns = await startDnsServer();
  for (const domain of SENDERS) {
    // A TXT string holds at most 255 bytes: the 2048-bit key's record is several strings of one record.
    const record = `v=DKIM1; k=rsa; p=${publicKeys[domain]}`;
    dns.zone.txt.set(`bench._domainkey.${domain}`, [record.match(/.{1,250}/g)!]);
    dns.zone.txt.set(domain, ['v=spf1 ip4:127.0.0.0/8 -all']);
    dns.zone.txt.set(`_dmarc.${domain}`, ['v=DMARC1; p=reject']);
  }
  const receiver = await startReceiver();
  const port = await freePort();
  const ctx = await createTestContext({
    env: { PUBLIC_URL: 'http://mail.example.test', SMTP_INBOUND_PORT: String(port), DNS_SERVERS: dns.address },
  });
  const world = await createWorld(ctx.app);
  // A plan whose daily inbound volume is above the bench's count.
  await ctx.db.sequelize.query(`UPDATE tenants SET plan = 'business' WHERE id = :id`, {
    replacements: { id: world.tenantId },
  });
  const api = (url: string, payload?: object) =>
    ctx.app.inject({ method: payload ? 'POST' : 'GET', url, headers: world.asKey, ...(payload ? { payload } : {}) });
  const endpoint = (await api('/webhooks/endpoints', { url: receiver.url, events: ['inbound.received'] })).json();
  const [token, domain] = ((await api('/inbound/address')).json().address as string).split('@');
  const route = await api('/inbound/routes', {
    address: `${token}+*@${domain}`,
    action: 'webhook',
    endpointId: endpoint.id,
  });
  if (route.statusCode !== 201) throw new Error(route.body);
  const inbound = (await startInboundServer({
    config: ctx.config,
    db: ctx.db,
    secrets: ctx.deps.secrets,
    log: { info: () => {}, warn: () => {} },
    redis: ctx.deps.redis,
    redisPrefix: ctx.deps.redisPrefix,
  }))!;
  const dispatcher = createTestDispatcher(ctx);
  let running = true;
  const claiming = (async () => {
    while (running) {
      await dispatcher.claim();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  const delivered = async () => {
    const [{ n }] = await ctx.db.sequelize.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM inbound_messages WHERE status = 'delivered'`,
      { type: QueryTypes.SELECT },
    );
    return n;
  };
  const to = Array.from({ length: 20 }, (_, i) => `${token}+bench${i}@${domain}`);
  // One message per reader thread (of this revision's listener: one or more), sent at once and
  // delivered before the measured run, so that the threads' cold start (seconds of CPU through tsx)
  // stays out of its CPU per message.
  const warmUp = await warmUpMessages(inbound.port, to[0], keys, availableParallelism());
  await waitUntil('the warm-up delivered', async () => (await delivered()) >= warmUp, 300_000);
  const database = new URL(ctx.databaseUrl).pathname.slice(1) || null;
  let stop = delays();
  let started = 0;
  let cpuBefore = cpuNow(database);
  const injected = await inject(inbound.port, to, keys, COUNT, (at) => {
    stop = delays();
    started = at;
    cpuBefore = cpuNow(database);
  });
  await waitUntil('every message delivered', async () => (await delivered()) >= warmUp + injected.accepted, 600_000);
  const seconds = (Date.now() - started) / 1000;
  const loop = stop();
  const cpu = cpuPerMessage(cpuBefore, cpuNow(database), injected.accepted, injected.cpuMs);
  const ok = receiver.requests.length - warmUp;
  // The verdicts the service computed (InboundAuth in shared/schemas/inbound-message.ts), read by path.
  const [verdicts] = await ctx.db.sequelize.query<{
    dkim: string | null;
    spf: string | null;
    dmarc: string | null;
    why: string | null;
  }>(
    `SELECT parsed #>> '{auth,dkim,result}' AS dkim, parsed #>> '{auth,spf,result}' AS spf,
            parsed #>> '{auth,dmarc,result}' AS dmarc, parsed #>> '{auth,spf,explanation}' AS why
       FROM inbound_messages LIMIT 1`,
    { type: QueryTypes.SELECT },
  );
  running = false;
  await claiming;
  await dispatcher.stop(1_000);
  await inbound.stop();
  await ctx.close();
  await receiver.close();
  await dns.close();
  const n = await Promise.resolve(injected.accepted);
  return {
    delivered: n,
    webhookRequests: ok,
    perSecond: Math.round(n / seconds),
    seconds,
    loop,
    cpu,
    injected,
    verdicts,
  };
}

async function main() {
  const keys: Record<string, string> = {};
  const publicKeys: Record<string, string> = {};
  for (const domain of SENDERS) {
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    keys[domain] = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    publicKeys[domain] = (pair.publicKey.export({ type: 'spki', format: 'der' }) as Buffer).toString('base64');
  }
  const base = await baseline(keys);
  console.log('baseline (smtp-server + mailparser):', base);
  const ours = await svc(keys, publicKeys);
  console.log('svc inbound → webhook:', ours);
  const results = {
    date: new Date().toISOString(),
    machine: machineInfo(null),
    messages: COUNT,
    svc: ours,
    baseline: base,
    ratio: Math.round((ours.perSecond / base.perSecond) * 100) / 100,
    goal: { perSecond: 200, loopMaxMs: 50, met: ours.perSecond >= 200 && ours.loop.maxMs <= 50 },
  };
  writeFileSync(resultsFile('inbound-results.json'), JSON.stringify(results, null, 2) + '\n');
  console.log(JSON.stringify({ ratio: results.ratio, goal: results.goal }));
  process.exit(0);
}

if (process.argv[2] === 'inject') void injectChild();
else void main();
