// A 15 MB message through the inbound SMTP port of a real daemon (`svc daemon start`) must not hold
// its event loop for more than about 50 ms (issue 32): a DMARC-address message with a 15 MB
// attachment, and a 15 MB DKIM-signed ARF report at fbl@ (its signature is verified, its body hashed).
// Measured as the bombs are (dmarc-bombs.test.ts): the daemon's own event-loop delay in /metrics,
// each scrape starting a new interval, an idle interval beside it, /health/ready polled throughout.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes, generateKeyPairSync } from 'node:crypto';
import { createConnection } from 'node:net';
import { dkimSign } from 'mailauth/lib/dkim/sign.js';
import { freePort } from './helpers/swaks.ts';
import {
  killAllDaemons,
  seedSendWorld,
  startChildDaemon,
  type ChildDaemon,
  type SendWorld,
} from './helpers/send-daemon.ts';
import { pollReadiness } from './helpers/readiness-probes.ts';
import { waitFor } from './helpers/wait.ts';
import { longestBetween, parsePrometheusText, type Exposition } from './helpers/prometheus-text.ts';

const MIB = 1024 ** 2;
let world: SendWorld;
let daemon: ChildDaemon;
let inboundPort: number;

test.before(async () => {
  inboundPort = await freePort();
  world = await seedSendWorld({ SMTP_INBOUND_PORT: String(inboundPort), DNS_SERVERS: '127.0.0.1:9' });
  daemon = await startChildDaemon(world);
});
test.after(async () => {
  killAllDaemons();
  await world?.database.drop();
});

/** One scrape of /metrics, checked as Prometheus would read it. */
async function metrics(): Promise<Exposition> {
  return parsePrometheusText(await (await fetch(`${daemon.url}/metrics`)).text());
}

/** The longest event-loop delay between two scrapes, in ms (a bucket bound of svc_event_loop_delay_seconds). */
const longestMs = (before: Exposition, after: Exposition) =>
  longestBetween(before, after, 'svc_event_loop_delay_seconds') * 1000;

/** One SMTP transaction over a plain socket, the message written in 64 KiB writes; the final reply. */
function deliver(to: string, raw: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(inboundPort, '127.0.0.1');
    const steps = [
      'EHLO mx.example.net\r\n',
      'MAIL FROM:<reports@example.net>\r\n',
      `RCPT TO:<${to}>\r\n`,
      'DATA\r\n',
      null,
      'QUIT\r\n',
    ];
    let transcript = '';
    let replies = 0;
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => {
      transcript += text;
      // One step per complete reply (the last line of a reply has a space after its code).
      const complete = transcript.split('\r\n').filter((line) => /^\d{3} /.test(line)).length;
      while (replies < complete) {
        replies++;
        if (replies > steps.length) break;
        const step = steps[replies - 1];
        if (step !== null) socket.write(step);
        else {
          // The message has no line starting with a dot (base64 and headers), so no dot-stuffing.
          for (let at = 0; at < raw.length; at += 64 * 1024) socket.write(raw.subarray(at, at + 64 * 1024));
          socket.write('\r\n.\r\n');
        }
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(transcript));
  });
}

const crlf = (text: string) => text.replace(/\r?\n/g, '\r\n');
/** `bytes` of random data as base64 lines of 76 characters. */
function base64Lines(bytes: number): string {
  return (
    randomBytes(bytes)
      .toString('base64')
      .match(/.{1,76}/g) ?? []
  ).join('\r\n');
}

function largeDmarcMessage(): Buffer {
  return Buffer.from(
    crlf(`From: reports@example.net
To: dmarc-reports@localhost
Subject: Report domain: acme.test Submitter: example.net
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="b"

--b
Content-Type: text/plain

A scan, not a report.
--b
Content-Type: application/octet-stream; name="scan.pdf"
Content-Transfer-Encoding: base64
Content-Disposition: attachment; filename="scan.pdf"

`) +
      base64Lines(Math.round(10.7 * MIB)) +
      '\r\n--b--\r\n',
  );
}

/** An ARF complaint returning a 15 MB message, DKIM-signed by a domain whose key is nowhere published. */
async function largeSignedArf(): Promise<Buffer> {
  const message = Buffer.from(
    crlf(`From: abuse@isp.example.org
To: fbl@localhost
Subject: Complaint
MIME-Version: 1.0
Content-Type: multipart/report; report-type=feedback-report; boundary="b"

--b
Content-Type: text/plain

This is an email abuse report.
--b
Content-Type: message/feedback-report

Feedback-Type: abuse
User-Agent: test/1.0
Version: 1
Original-Rcpt-To: reader@example.org

--b
Content-Type: message/rfc822

From: someone@acme.test
To: reader@example.org
Subject: returned in full
Content-Type: application/octet-stream
Content-Transfer-Encoding: base64

`) +
      base64Lines(Math.round(10.7 * MIB)) +
      '\r\n--b--\r\n',
  );
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const signed = await dkimSign(message, {
    signatureData: [
      {
        signingDomain: 'isp.example.org',
        selector: 's1',
        privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      },
    ],
  } as never);
  return Buffer.concat([Buffer.from(signed.signatures), message]);
}

test('a 15 MB message (a DMARC attachment, a signed ARF report) holds the event loop no more than ~50 ms', async () => {
  const dmarc = largeDmarcMessage();
  const arf = await largeSignedArf();
  assert.ok(dmarc.length > 14 * MIB && dmarc.length < 15 * MIB, `${dmarc.length} bytes`);
  assert.ok(arf.length > 14 * MIB && arf.length < 15 * MIB, `${arf.length} bytes`);
  // Once each first: the reader thread starts, the heap grows to hold a message this large.
  const first = await deliver('dmarc-reports@localhost', dmarc);
  assert.match(first, /250 Accepted: dmarc\r\n/, first);
  assert.match(await deliver('fbl@localhost', arf), /250 Accepted: unverified\r\n/);

  const readiness = pollReadiness(daemon.url);
  const probes = readiness.probes;
  const delays: Record<string, number> = {};
  let idleMs = Infinity;
  try {
    const quiet = await metrics();
    await waitFor('10 readiness probes while idle', () => probes.length >= 10, { timeoutMs: 30_000, intervalMs: 50 });
    idleMs = longestMs(quiet, await metrics());
    for (const [name, to, raw, reply] of [
      ['15 MB DMARC attachment', 'dmarc-reports@localhost', dmarc, /250 Accepted: dmarc\r\n/],
      ['15 MB signed ARF', 'fbl@localhost', arf, /250 Accepted: unverified\r\n/],
    ] as const) {
      // A stall of ours happens on every delivery; a busy host's scheduling does not: best of three.
      let delayMs = Infinity;
      for (let attempt = 0; attempt < 3 && delayMs >= 50; attempt++) {
        const start = await metrics();
        assert.match(await deliver(to, raw), reply);
        delayMs = Math.min(delayMs, longestMs(start, await metrics()));
      }
      delays[name] = delayMs;
    }
  } finally {
    await readiness.stop();
  }
  console.log(
    `    event-loop max: ${Object.entries(delays)
      .map(([name, ms]) => `${name} ${ms.toFixed(0)} ms`)
      .join(
        ', ',
      )} (idle ${idleMs.toFixed(0)} ms); slowest readiness probe ${Math.max(...probes.map((p) => p.ms)).toFixed(0)} ms`,
  );
  for (const [name, ms] of Object.entries(delays))
    // A bucket bound: at most that long (60 ms is a bound, so "≤ 60" reads as "< 60" did before).
    assert.ok(ms <= Math.max(60, idleMs + 30), `${name}: event-loop max delay ≤ ${ms} ms (idle ≤ ${idleMs} ms)`);
  assert.equal(
    probes.filter((probe) => probe.status !== 200),
    [],
  );
});

test.run();
