// The 100 KB message of `npm run bench:mta`, and the destinations. svc gets the parts through the API
// (POST /emails/batch) and composes and signs each message itself; Postfix and Haraka get the same parts
// composed and DKIM-signed beforehand by nodemailer (the library svc composes and signs with), with the
// same key and the same signed header list, outside the timed run.
import { createHash, sign } from 'node:crypto';
import nodemailer from 'nodemailer';
import { DKIM_SIGNED_HEADERS } from '../daemon/mail/compose.ts';

export const MTA_BENCH_FROM = 'Bench News <news@bench.example>';
export const MTA_BENCH_ENVELOPE_FROM = 'bounces@bench.example';
export const MTA_BENCH_SUBJECT = 'Your weekly report';

/**
 * The first of the ten loopback sink addresses: 127.0.0.100 unless BENCH_MTA_SINK_BASE says another (two
 * bench:mta runs at once on one box, each on its own ten addresses).
 */
const SINK_BASE = Number(process.env.BENCH_MTA_SINK_BASE ?? 100);
/** Ten destinations on loopback MX hosts; the ninth answers DATA slowly, the tenth defers 10 %. */
export const DESTINATIONS = Array.from({ length: 10 }, (_, index) => ({
  domain:
    index === 8 ? 'slow.mta-bench.test' : index === 9 ? 'defer.mta-bench.test' : `fast${index + 1}.mta-bench.test`,
  address: `127.0.0.${SINK_BASE + index}`,
  behaviour: (index === 8 ? 'slow' : index === 9 ? 'defer' : 'fast') as 'fast' | 'slow' | 'defer',
}));
export const NORMAL_DOMAINS = DESTINATIONS.filter((d) => d.behaviour === 'fast').map((d) => d.domain);

const line = (n: number) =>
  `Line ${String(n).padStart(5, '0')}: the figures of this week, one row of a long plain report for the bench.`;

// ASCII in short lines: nodemailer sends both parts as they are (no encoding growth). About 60 KB of
// HTML and 40 KB of text: a 100 KB message once composed.
export const MTA_BENCH_HTML = `<!doctype html><html><body><h1>Weekly report</h1>\n${Array.from({ length: 640 }, (_, n) => `<p>${line(n)}</p>`).join('\n')}\n</body></html>`;
export const MTA_BENCH_TEXT = `Weekly report\n\n${Array.from({ length: 440 }, (_, n) => line(n)).join('\n')}\n`;

/** Recipient `index` of a run: spread evenly over the destinations. */
export function recipientOf(run: string, index: number): string {
  return `${run}${index}@${DESTINATIONS[index % DESTINATIONS.length].domain}`;
}

export interface PresignedMessage {
  to: string;
  messageId: string;
  raw: Buffer;
}

interface DkimKey {
  domainName: string;
  keySelector: string;
  privateKey: string;
}

/** RFC 6376 §3.4.4 relaxed body: whitespace runs to one space, none at line ends, no empty lines at the end. */
function relaxedBody(body: string): string {
  const lines = body.split('\r\n').map((l) => l.replace(/[ \t]+/g, ' ').replace(/ $/, ''));
  while (lines.length && lines[lines.length - 1] === '') lines.pop();
  return lines.length ? `${lines.join('\r\n')}\r\n` : '';
}

/** RFC 6376 §3.4.2 relaxed header: lower-case name, unfolded, whitespace runs to one space. */
const relaxedHeader = (name: string, value: string) =>
  `${name.toLowerCase()}:${value
    .replace(/\r\n/g, '')
    .replace(/[ \t]+/g, ' ')
    .trim()}`;

/**
 * Signs one message (relaxed/relaxed, rsa-sha256, the header fields of DKIM_SIGNED_HEADERS it has),
 * given the hash of its body: the bench's messages share one body, hashed once.
 */
function dkimSign(header: string, bodyHash: string, key: DkimKey): string {
  const fields = header
    .split(/\r\n(?![ \t])/)
    .filter(Boolean)
    .map((field) => ({ name: field.slice(0, field.indexOf(':')), value: field.slice(field.indexOf(':') + 1) }));
  const wanted = DKIM_SIGNED_HEADERS.split(':').map((n) => n.toLowerCase());
  const signed = fields.filter((f) => wanted.includes(f.name.toLowerCase()));
  const tags = `v=1; a=rsa-sha256; c=relaxed/relaxed; d=${key.domainName}; q=dns/txt; s=${key.keySelector}; bh=${bodyHash}; h=${signed.map((f) => f.name).join(':')}; b=`;
  const data = [
    ...signed.map((f) => relaxedHeader(f.name, f.value) + '\r\n'),
    relaxedHeader('DKIM-Signature', tags),
  ].join('');
  const b = sign('sha256', Buffer.from(data), key.privateKey).toString('base64');
  return `DKIM-Signature: ${tags}${b}\r\n`;
}

/**
 * Composes `count` messages (one recipient each) and DKIM-signs them with the sending domain's key
 * (`key` null: unsigned, for an MTA that signs them itself: Postfix + OpenDKIM). nodemailer composes
 * the first (the MIME of the same parts svc composes); the others differ only in To and Message-ID, so
 * they take its header with those two replaced, and its body, hashed once.
 */
export async function presignMessages(run: string, count: number, key: DkimKey | null): Promise<PresignedMessage[]> {
  const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  const first = await composer.sendMail({
    from: MTA_BENCH_FROM,
    to: recipientOf(run, 0),
    subject: MTA_BENCH_SUBJECT,
    html: MTA_BENCH_HTML,
    text: MTA_BENCH_TEXT,
    messageId: `<${run}-0@bench.example>`,
    headers: { 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
  });
  const raw = (first.message as unknown as Buffer).toString('latin1');
  const split = raw.indexOf('\r\n\r\n');
  const template = raw.slice(0, split + 2);
  const body = Buffer.from(raw.slice(split + 4), 'latin1');
  const bodyHash = createHash('sha256')
    .update(relaxedBody(body.toString('latin1')), 'latin1')
    .digest('base64');
  const messages: PresignedMessage[] = [];
  for (let index = 0; index < count; index++) {
    const to = recipientOf(run, index);
    const messageId = `<${run}-${index}@bench.example>`;
    const header = template.replace(/^To: .*$/m, `To: ${to}`).replace(/^Message-ID: .*$/m, `Message-ID: ${messageId}`);
    const signature = key ? dkimSign(header, bodyHash, key) : '';
    messages.push({ to, messageId, raw: Buffer.concat([Buffer.from(signature + header + '\r\n', 'latin1'), body]) });
  }
  return messages;
}
