// The baseline of the end-to-end measurement, as a child process like the daemon: plain pooled
// nodemailer sending N messages to the sink, the same message the daemon sends (same headers, same
// DKIM key, or unsigned with BENCH_DKIM=0), with the same pool size. Prints "ready", sends, then
// "done <sent> <failed> <cpu ms>".
// Usage: node --import tsx bench/nodemailer-child.ts   (env BENCH_* below)
import { randomUUID } from 'node:crypto';
import nodemailer from 'nodemailer';
import { DKIM_SIGNED_HEADERS } from '../daemon/mail/compose.ts';
import { BENCH_FROM, BENCH_HTML, BENCH_TEXT } from './message.ts';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const port = Number(env('BENCH_SINK_PORT'));
const count = Number(env('BENCH_COUNT'));
const maxConnections = Number(env('BENCH_MAX_CONNECTIONS'));
const maxMessages = Number(env('BENCH_MAX_MESSAGES'));
// How many sendMail calls are outstanding at once: the daemon's send worker runs 10 jobs at a time.
const inFlight = Number(process.env.BENCH_IN_FLIGHT ?? 10);
const signed = process.env.BENCH_DKIM !== '0';
const domainName = env('BENCH_DKIM_DOMAIN');
const dkim = signed
  ? {
      domainName,
      keySelector: env('BENCH_DKIM_SELECTOR'),
      privateKey: env('BENCH_DKIM_KEY'),
      headerFieldNames: DKIM_SIGNED_HEADERS,
    }
  : undefined;

const transport = nodemailer.createTransport({
  pool: true,
  host: '127.0.0.1',
  port,
  secure: false,
  maxConnections,
  maxMessages,
});

function message() {
  const id = randomUUID();
  const token = Buffer.from(randomUUID() + randomUUID()).toString('base64url');
  return {
    from: BENCH_FROM,
    to: ['Reader <reader@example.com>'],
    subject: 'Your weekly summary',
    html: BENCH_HTML,
    text: BENCH_TEXT,
    messageId: `<${id}@${domainName}>`,
    headers: {
      'List-Unsubscribe': `<http://127.0.0.1:3000/u/${token}>, <mailto:unsubscribe@localhost?subject=unsubscribe-${token}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      'X-Service-Email-Id': id,
      'X-Service-Tags': 'bench',
    },
    dkim,
  };
}

console.log('ready');
const cpuAtReady = process.cpuUsage();
let next = 0;
let failed = 0;
async function lane() {
  while (next < count) {
    next += 1;
    await transport.sendMail(message()).catch(() => {
      failed += 1;
    });
  }
}
await Promise.all(Array.from({ length: inFlight }, lane));
transport.close();
const cpu = process.cpuUsage(cpuAtReady);
console.log(`done ${count - failed} ${failed} ${(cpu.user + cpu.system) / 1000}`);
process.exit(0);
