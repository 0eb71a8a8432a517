// The inbound reader's thread (reader.ts starts it): every parse of a stranger's raw message — MIME
// of a report, DMARC attachments, the subject and text of an unsubscribe mail — one at a time, so
// that a 15 MB message or a lying archive costs this thread's time and never the event loop's.
// Answers plain data; no database, no state between messages.
import { parentPort } from 'node:worker_threads';
import { simpleParser } from 'mailparser';
import { readDmarcAttachments } from '../dmarc/attachments.ts';
import { readReport } from './mime.ts';
import type { ReaderRequest, ReaderResponse, ReadMessage } from './reader.ts';

async function subjectAndText(raw: Buffer): Promise<string> {
  const parsed = await simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
  return `${parsed.subject ?? ''}\n${parsed.text ?? ''}`;
}

async function run(request: ReaderRequest): Promise<ReadMessage> {
  const raw = Buffer.from(request.raw.buffer, request.raw.byteOffset, request.raw.byteLength);
  return {
    report: readReport(raw.toString('utf8')),
    dmarc: request.wanted.dmarc ? await readDmarcAttachments(raw) : null,
    text: request.wanted.text ? await subjectAndText(raw) : null,
  };
}

parentPort!.on('message', (request: ReaderRequest) => {
  run(request).then(
    (result) => parentPort!.postMessage({ id: request.id, result } satisfies ReaderResponse),
    (error: unknown) =>
      parentPort!.postMessage({
        id: request.id,
        error: error instanceof Error ? error.message : String(error),
      } satisfies ReaderResponse),
  );
});
