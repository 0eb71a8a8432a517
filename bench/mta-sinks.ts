// The MX hosts of `npm run bench:mta`, in a child process of their own so that receiving 100 KB
// messages does not take the measured process's event loop. One minimal SMTP server per loopback
// address on port 25 (EHLO with PIPELINING, MAIL, RCPT, DATA, RSET, NOOP, QUIT; no TLS, no parsing
// beyond the Message-ID header), cheaper than smtp-server so the sinks cost as little as they can.
// Each address is one destination domain's MX; per sink a behaviour:
//   fast   answers at once;
//   slow   answers the end of DATA after SLOW_DATA_MS;
//   defer  answers 451 to the first RCPT of every tenth new recipient (its retry is taken).
// Each sink also counts the connections it has open at once, the messages each connection carried and
// the messages per EHLO name (which node sent them, when several worker nodes say different names).
// A small HTTP server on 127.0.0.1 reports the counts (GET /stats, GET /arrivals) and takes
// POST /reset and POST /behaviours (a JSON array, one behaviour per sink, in address order).
// argv: a JSON array of { address, domain, behaviour }. Prints "ready <http port>".
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

export type SinkBehaviour = 'fast' | 'slow' | 'defer';
export interface SinkSpec {
  address: string;
  domain: string;
  behaviour: SinkBehaviour;
}

export interface DomainStats {
  count: number;
  bytes: number;
  /** Epoch ms (fractional) of the first and last message. */
  first: number | null;
  last: number | null;
  deferredRcpts: number;
  /** The most connections open at once, and the most messages one connection carried (since the reset). */
  maxConnections: number;
  maxMessagesPerConnection: number;
}

export interface SinkStats {
  total: number;
  unique: number;
  duplicates: number;
  /** Messages whose header has a DKIM-Signature field. */
  signed: number;
  byDomain: Record<string, DomainStats>;
  /** Messages per EHLO name the client said. */
  byHelo: Record<string, number>;
}

const SLOW_DATA_MS = 200;
const DEFER_EVERY = 10;
const TERMINATOR = Buffer.from('\r\n.\r\n');
const MESSAGE_ID = /^message-id:[ \t]*(<[^>\r\n]+>)/im;
const DKIM_SIGNATURE = /^dkim-signature:/im;

const specs = JSON.parse(process.argv[2] ?? '[]') as SinkSpec[];
const now = () => performance.timeOrigin + performance.now();

let stats: SinkStats;
let arrivals: Map<string, number>;
/** Recipients the deferring sinks have seen (their second RCPT is taken). */
let seenRcpts: Set<string>;
let newRcpts: number;
/** Connections open now per sink (kept across a reset: they are still open). */
const open = new Map<string, number>();
function reset(): void {
  stats = { total: 0, unique: 0, duplicates: 0, signed: 0, byDomain: {}, byHelo: {} };
  for (const spec of specs)
    stats.byDomain[spec.domain] = {
      count: 0,
      bytes: 0,
      first: null,
      last: null,
      deferredRcpts: 0,
      maxConnections: open.get(spec.domain) ?? 0,
      maxMessagesPerConnection: 0,
    };
  arrivals = new Map();
  seenRcpts = new Set();
  newRcpts = 0;
}
reset();

function received(spec: SinkSpec, message: Buffer, session: { helo: string; messages: number }): void {
  const at = now();
  const domain = stats.byDomain[spec.domain];
  domain.count++;
  session.messages++;
  domain.maxMessagesPerConnection = Math.max(domain.maxMessagesPerConnection, session.messages);
  stats.byHelo[session.helo] = (stats.byHelo[session.helo] ?? 0) + 1;
  domain.bytes += message.length;
  domain.first ??= at;
  domain.last = at;
  stats.total++;
  const head = message.subarray(0, Math.min(message.length, 16_384)).toString('latin1');
  const end = head.indexOf('\r\n\r\n');
  const header = end === -1 ? head : head.slice(0, end);
  if (DKIM_SIGNATURE.test(header)) stats.signed++;
  const id = MESSAGE_ID.exec(header.replace(/\r\n[ \t]+/g, ' '))?.[1];
  if (id && arrivals.has(id)) stats.duplicates++;
  else {
    stats.unique++;
    if (id) arrivals.set(id, at);
  }
}

function rcptReply(spec: SinkSpec, address: string): string {
  if (spec.behaviour !== 'defer' || seenRcpts.has(address)) return '250 2.1.5 ok';
  seenRcpts.add(address);
  if (newRcpts++ % DEFER_EVERY !== 0) return '250 2.1.5 ok';
  stats.byDomain[spec.domain].deferredRcpts++;
  return '451 4.7.1 try again later (bench deferral)';
}

/** One SMTP session: commands in order (pipelined ones queue behind a reply that waits). */
function serve(spec: SinkSpec, socket: Socket): void {
  let input: Buffer = Buffer.alloc(0);
  let inData = false;
  let scanFrom = 0;
  let waiting = false;
  let rcpts = 0;
  const session = { helo: '', messages: 0 };
  const opened = (open.get(spec.domain) ?? 0) + 1;
  open.set(spec.domain, opened);
  const domainStats = stats.byDomain[spec.domain];
  domainStats.maxConnections = Math.max(domainStats.maxConnections, opened);
  socket.once('close', () => open.set(spec.domain, (open.get(spec.domain) ?? 1) - 1));
  const reply = (line: string) => socket.write(`${line}\r\n`);

  const advance = (): void => {
    while (!waiting && !socket.destroyed) {
      if (inData) {
        // The message may be empty: the terminator then starts at the very first byte.
        const at = input.subarray(0, 3).equals(TERMINATOR.subarray(2)) ? -2 : input.indexOf(TERMINATOR, scanFrom);
        if (at === -1) {
          scanFrom = Math.max(0, input.length - TERMINATOR.length);
          return;
        }
        const message = at < 0 ? Buffer.alloc(0) : input.subarray(0, at + 2);
        input = input.subarray(at + TERMINATOR.length);
        inData = false;
        scanFrom = 0;
        rcpts = 0;
        if (spec.behaviour === 'slow') {
          waiting = true;
          setTimeout(() => {
            received(spec, message, session);
            reply('250 2.0.0 queued');
            waiting = false;
            advance();
          }, SLOW_DATA_MS);
          return;
        }
        received(spec, message, session);
        reply('250 2.0.0 queued');
        continue;
      }
      const newline = input.indexOf('\r\n');
      if (newline === -1) return;
      const line = input.subarray(0, newline).toString('latin1');
      input = input.subarray(newline + 2);
      const verb = line.slice(0, 4).toUpperCase();
      if (verb === 'EHLO' || verb === 'HELO') session.helo = line.slice(5).trim();
      if (verb === 'EHLO') reply(`250-${spec.address}\r\n250-PIPELINING\r\n250-8BITMIME\r\n250 SIZE 52428800`);
      else if (verb === 'HELO') reply(`250 ${spec.address}`);
      else if (verb === 'MAIL') {
        rcpts = 0;
        reply('250 2.1.0 ok');
      } else if (verb === 'RCPT') {
        const address = /<([^>]*)>/.exec(line)?.[1]?.toLowerCase() ?? line;
        const answer = rcptReply(spec, address);
        if (answer.startsWith('250')) rcpts++;
        reply(answer);
      } else if (verb === 'DATA') {
        if (rcpts === 0) reply('554 5.5.1 no valid recipients');
        else {
          inData = true;
          reply('354 go ahead');
        }
      } else if (verb === 'RSET') {
        rcpts = 0;
        reply('250 2.0.0 ok');
      } else if (verb === 'NOOP') reply('250 2.0.0 ok');
      else if (verb === 'QUIT') {
        reply('221 2.0.0 bye');
        socket.end();
        return;
      } else reply('502 5.5.2 not implemented');
    }
  };

  socket.on('data', (chunk: Buffer) => {
    input = input.length === 0 ? chunk : Buffer.concat([input, chunk]);
    advance();
  });
  socket.on('error', () => {});
  reply(`220 ${spec.address} ESMTP bench sink`);
}

for (const spec of specs) {
  const server = createServer((socket) => serve(spec, socket));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(25, spec.address, resolve);
  });
}

const control = createHttpServer((request, response) => {
  let body = '';
  request.on('data', (chunk: Buffer) => (body += chunk.toString()));
  request.on('end', () => {
    const json = (value: unknown) => {
      // No keep-alive: the bench's fetch would reuse a socket this server closed after minutes of signing.
      response.setHeader('connection', 'close');
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify(value));
    };
    if (request.method === 'GET' && request.url === '/stats') return json(stats);
    if (request.method === 'GET' && request.url === '/arrivals') return json(Object.fromEntries(arrivals));
    if (request.method === 'POST' && request.url === '/reset') return (reset(), json({ ok: true }));
    if (request.method === 'POST' && request.url === '/behaviours') {
      const behaviours = JSON.parse(body) as SinkBehaviour[];
      behaviours.forEach((behaviour, index) => (specs[index].behaviour = behaviour));
      return json({ ok: true });
    }
    response.statusCode = 404;
    response.end();
  });
});
await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));
console.log(`ready ${(control.address() as { port: number }).port}`);
process.once('SIGTERM', () => process.exit(0));
// A bench killed without its clean-up must not leave the MX addresses taken.
const parent = process.ppid;
setInterval(() => process.ppid !== parent && process.exit(0), 1000).unref();
