// The inbound reader's thread (reader.ts starts it): every parse of a stranger's raw message — MIME
// of a report, DMARC attachments, the tokens in an unsubscribe mail, the DKIM signatures of a
// feedback-loop report, and for a tenant's route the parsed message, its verdicts and its gzipped
// source (inbound-routing/parse.ts) — one at a time, so
// that a 15 MB message or a lying archive costs this thread's time and never the event loop's.
// Answers plain data; no database, no state between messages.
import { errorText } from '../../errors.ts';
import { parentPort } from 'node:worker_threads';
import { simpleParser } from 'mailparser';
import { readDmarcAttachments } from '../dmarc/attachments.ts';
import { readReport, type ReportMessage } from './mime.ts';
import { checkDkimSignatures } from './feedback-auth.ts';
import { withStorableText } from '../../db/storable-text.ts';
import { readRouted } from '../inbound-routing/parse.ts';
import { loadMailauth } from './mailauth-load.ts';
import { READ_PART_MAX_CHARS, type ReaderRequest, type ReaderResponse, type ReadMessage } from './reader.ts';

/** Unsubscribe tokens (link-tokens.ts: base64url of iv · tag · ciphertext) are long; words this long are candidates. */
const TOKEN_CANDIDATE = /[A-Za-z0-9_-]{60,}/g;
/** More candidates than any honest mail holds; each costs a decryption attempt on the event loop. */
const MAX_TOKEN_CANDIDATES = 20;

async function unsubscribeTokens(raw: Buffer): Promise<string[]> {
  const parsed = await simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
  // The mailto puts the token in the subject; some clients move it into the body, so both are read.
  const candidates = `${parsed.subject ?? ''}\n${parsed.text ?? ''}`.matchAll(TOKEN_CANDIDATE);
  return [...new Set([...candidates].map((match) => match[0]))].slice(0, MAX_TOKEN_CANDIDATES);
}

function cutBodies(report: ReportMessage): ReportMessage {
  return { ...report, parts: report.parts.map((part) => ({ ...part, body: part.body.slice(0, READ_PART_MAX_CHARS) })) };
}

async function run(request: ReaderRequest): Promise<ReadMessage> {
  // Joined here, in this thread: the event loop only moved the chunks over.
  const raw = Buffer.concat(request.chunks);
  const { wanted } = request;
  const report = wanted.report ? readReport(raw.toString('utf8')) : null;
  // A stranger's part may decode to U+0000 (quoted-printable `=00`), which no text column holds: the
  // report is recorded with U+FFFD there rather than refused with a 451 its sender retries for days.
  return withStorableText({
    report: report && cutBodies(report),
    dmarc: wanted.dmarc ? await readDmarcAttachments(raw) : null,
    unsubscribeTokens: wanted.unsubscribeTokens ? await unsubscribeTokens(raw) : null,
    feedbackSignatures:
      wanted.feedbackSignatures && report?.reportType === 'feedback-report'
        ? await checkDkimSignatures(raw, wanted.feedbackSignatures.dnsServers)
        : null,
    routed: wanted.routed ? await readRouted(raw, wanted.routed) : null,
  });
}

/** The routed message's bytes go back moved, not copied (each owns its buffer: parse.ts). */
const transferred = (result: ReadMessage): ArrayBuffer[] =>
  result.routed
    ? [result.routed.rawGzip, ...result.routed.attachments.map((a) => a.content)].map((b) => b.buffer as ArrayBuffer)
    : [];

parentPort!.on('message', (request: ReaderRequest) => {
  run(request).then(
    (result) => parentPort!.postMessage({ id: request.id, result } satisfies ReaderResponse, transferred(result)),
    (error: unknown) =>
      parentPort!.postMessage({
        id: request.id,
        error: errorText(error),
      } satisfies ReaderResponse),
  );
});

// mailauth is loaded here once rather than within a routed message's read (it costs a cold thread
// seconds on a loaded machine); then the listener starts the first message's time limit (reader.ts).
// A failed load is retried by the first read that needs it, and reported there.
void loadMailauth()
  .catch(() => undefined)
  .then(() => parentPort!.postMessage({ ready: true } satisfies ReaderResponse));
