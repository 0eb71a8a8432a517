// Composing and signing bench:mta's 100 KB message as the send worker does for DELIVERY=direct, the old
// path against the new in one process: CPU ms per message for the whole (composeMessage, nodemailer's
// MIME tree, DKIM, CRLF) and for each step replaced (quoted-printable, the relaxed body hash, CRLF).
// Then every message of the run is built both ways with the date and boundaries fixed: the new bytes
// must be the old ones, and must pass DKIM (mailauth, against the key's public half).
//
//   nice -n 19 node --import tsx bench/compose-sign.ts [--messages 400] [--rounds 5]
//
// old: composeMessage's options given to nodemailer as they are (its quoted-printable Encoder), its own
// RelaxedBody.updateHash, `newline: 'windows'` (its LeWindows stream). new: MailTransports.build, as the
// send worker spools: pre-built parts (mail/encoded-parts.ts), dkim-body-hash.ts installed, line-ends.ts.
// Rounds alternate old and new, so a machine whose load changes weighs on both; CPU time is the
// process's (process.cpuUsage), which holds better than wall time on a shared machine. Writes
// bench/compose-sign-results.json.
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { Transform } from 'node:stream';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer';
import { Encoder } from 'nodemailer/lib/qp';
import RelaxedBody from 'nodemailer/lib/dkim/relaxed-body';
import LeWindows from 'nodemailer/lib/mime-node/le-windows';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { composeMessage, type ComposableEmail } from '../daemon/mail/compose.ts';
import { MailTransports } from '../daemon/mail/transport.ts';
import { encodeQuotedPrintable } from '../daemon/mail/quoted-printable.ts';
import { hashRelaxedBodyNatively } from '../daemon/mail/dkim-body-hash.ts';
import { withCrlfLineEnds } from '../daemon/mail/line-ends.ts';
import { MTA_BENCH_FROM, MTA_BENCH_HTML, MTA_BENCH_SUBJECT, MTA_BENCH_TEXT, recipientOf } from './mta-message.ts';
import { BENCH_DIR } from './children.ts';
import { machineInfo } from './machine.ts';

const { values: flags } = parseArgs({
  options: { messages: { type: 'string', default: '400' }, rounds: { type: 'string', default: '5' } },
});
const MESSAGES = Number(flags.messages);
const ROUNDS = Number(flags.rounds);
const log = (message: string) => console.error(`[compose-sign] ${message}`);

const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const DKIM = { domainName: 'bench.example', keySelector: 'bench', privateKey: privateKey as KeyObject };
const COMPOSE_OPTIONS = {
  publicUrl: 'https://svc.bench.example',
  linkSigningKey: Buffer.alloc(32, 1),
  mailDomain: null,
  dkim: DKIM,
  envelopeFrom: 'bounces@bench.example',
};

/** Log `index` of a run: bench:mta's parts, tracking off, one recipient. */
function benchEmail(index: number): ComposableEmail {
  return {
    id: `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`,
    tenantId: '00000000-0000-4000-8000-00000000beef',
    messageId: `<compose-${index}@bench.example>`,
    fromAddress: MTA_BENCH_FROM,
    toAddresses: [recipientOf('compose', index)],
    ccAddresses: [],
    bccAddresses: [],
    replyTo: [],
    subject: MTA_BENCH_SUBJECT,
    htmlBody: MTA_BENCH_HTML,
    textBody: MTA_BENCH_TEXT,
    headers: {},
    tags: [],
    attachments: [],
    trackOpens: false,
    trackClicks: false,
  };
}

// Installs dkim-body-hash.ts, as at every thread's start.
const transports = new MailTransports({ smtpUrl: null, smtpMaxConnections: 1, smtpMaxMessages: 1 });
const oldTransport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
/** nodemailer's pipeline without its CRLF stream: the bodies' bare LFs still there. */
const uncrlfTransport = nodemailer.createTransport({ streamTransport: true, buffer: true });

/** Which body hash nodemailer's signer uses: switched between rounds, never inside a timed one. */
let nativeBodyHash = hashRelaxedBodyNatively();
function useNativeBodyHash(native: boolean): void {
  if (native) nativeBodyHash = hashRelaxedBodyNatively();
  else nativeBodyHash.restore();
}

const composed = (index: number): Mail.Options => composeMessage(benchEmail(index), COMPOSE_OPTIONS).message;

const buildOld = async (options: Mail.Options) =>
  ((await oldTransport.sendMail(options)) as unknown as { message: Buffer }).message;
const buildNew = async (options: Mail.Options) => (await transports.build(options)).message;

/** A transform stream fed `input` in one chunk, read to its end. */
function drain(stream: Transform, input: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.on('error', reject);
    stream.on('end', resolve);
    stream.resume();
    stream.end(input);
  });
}

const beforeCrlf = ((await uncrlfTransport.sendMail(composed(0))) as unknown as { message: Buffer }).message;
const body = beforeCrlf.subarray(beforeCrlf.indexOf('\r\n\r\n') + 4);

interface Step {
  name: string;
  old: (index: number) => Promise<unknown> | unknown;
  new: (index: number) => Promise<unknown> | unknown;
}
const steps: Step[] = [
  {
    name: 'compose + sign (whole message)',
    old: (index) => buildOld(composed(index)),
    new: (index) => buildNew(composed(index)),
  },
  {
    name: 'quoted-printable (HTML + text)',
    old: async () => {
      await drain(new Encoder(), Buffer.from(MTA_BENCH_HTML));
      await drain(new Encoder(), Buffer.from(MTA_BENCH_TEXT));
    },
    new: () => [encodeQuotedPrintable(MTA_BENCH_HTML), encodeQuotedPrintable(MTA_BENCH_TEXT)],
  },
  {
    name: 'relaxed body hash (RelaxedBody stream)',
    old: () => drain(new RelaxedBody(), body),
    new: () => drain(new RelaxedBody(), body),
  },
  {
    name: 'CRLF line ends',
    old: () => drain(new LeWindows(), beforeCrlf),
    new: () => withCrlfLineEnds(beforeCrlf),
  },
];

/** CPU ms per message of `run` over MESSAGES messages. */
async function cpuMsPerMessage(run: (index: number) => Promise<unknown> | unknown): Promise<number> {
  const start = process.cpuUsage();
  for (let index = 0; index < MESSAGES; index++) await run(index);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / MESSAGES;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round2 = (value: number) => Math.round(value * 100) / 100;

const machine = machineInfo(null);
log(`${MESSAGES} messages × ${ROUNDS} rounds per path, load average ${machine.loadAverageAtStart.join(' ')}`);
const figures: { step: string; oldMs: number[]; newMs: number[] }[] = [];
for (const step of steps) {
  // Warm both paths up (JIT, pools) before anything is counted.
  for (let index = 0; index < 40; index++) {
    useNativeBodyHash(false);
    await step.old(index);
    useNativeBodyHash(true);
    await step.new(index);
  }
  const oldMs: number[] = [];
  const newMs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    useNativeBodyHash(false);
    oldMs.push(await cpuMsPerMessage(step.old));
    useNativeBodyHash(true);
    newMs.push(await cpuMsPerMessage(step.new));
  }
  figures.push({ step: step.name, oldMs: oldMs.map(round2), newMs: newMs.map(round2) });
  log(`${step.name}: old ${round2(median(oldMs))} ms, new ${round2(median(newMs))} ms (CPU per message, median)`);
}

// The same bytes, and a signature that verifies: every message of the run, date and boundaries fixed.
const txt = `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`;
const resolver = (name: string, type: string) =>
  Promise.resolve(type === 'TXT' && name === `${DKIM.keySelector}._domainkey.${DKIM.domainName}` ? [[txt]] : []);
let identical = 0;
let verified = 0;
for (let index = 0; index < MESSAGES; index++) {
  const fixed = { date: new Date(Date.UTC(2026, 10, 26)), baseBoundary: `compose${index}` };
  // One composition for both: each has link tokens of its own (a random IV).
  const options = { ...composed(index), ...fixed } as Mail.Options;
  useNativeBodyHash(false);
  const before = await buildOld(options);
  useNativeBodyHash(true);
  const after = await buildNew(options);
  if (after.equals(before)) identical++;
  else log(`message ${index}: the new bytes differ from the old`);
  const result = await dkimVerify(after, { resolver: resolver as never });
  const status = (result as { results: { status: { result: string } }[] }).results[0]?.status.result;
  if (status === 'pass') verified++;
  else log(`message ${index}: DKIM ${status}`);
}
log(`${identical} of ${MESSAGES} byte-identical to the old path, ${verified} of ${MESSAGES} pass DKIM`);

const summary = figures.map(({ step, oldMs, newMs }) => ({
  step,
  oldMsMedian: round2(median(oldMs)),
  newMsMedian: round2(median(newMs)),
  oldMs,
  newMs,
}));
console.log('| step | old CPU ms/msg | new CPU ms/msg |\n|---|---|---|');
for (const row of summary) console.log(`| ${row.step} | ${row.oldMsMedian} | ${row.newMsMedian} |`);
writeFileSync(
  `${BENCH_DIR}/compose-sign-results.json`,
  `${JSON.stringify({ machine, loadAverageAtEnd: machineInfo(null).loadAverageAtStart, messages: MESSAGES, rounds: ROUNDS, summary, identical, verified }, null, 2)}\n`,
);
if (identical !== MESSAGES || verified !== MESSAGES) process.exitCode = 1;
