// The header block of a submitted message read as mailparser reads it, without its stream. simpleParser
// on the header block alone (what submission-message.ts asked of it) builds a MailParser transform, a
// message splitter and a MIME node, and turns the event loop for each: ~0.25 ms of each message's CPU
// on the SMTP edge, where splitting the block into fields (mailsplit's Headers, done again here) and
// reading their values (mailparser's own processHeaders: encoded words, addresses, lists) cost ~0.04.
// The values are mailparser's since its code makes them; the split is mailsplit's rule, for blocks
// whose every line ends in CRLF (an LF alone, or a first line that is no field, is left to mailparser).
// processHeaders is internal to mailparser: where a version has none, every block goes to simpleParser.
// test/smtp-submission-headers.test.ts holds both readings equal on a corpus.
import type { AddressObject, HeaderLines, Headers, MailParser } from 'mailparser';
import { hasBareLf } from '../mail/line-ends.ts';

/** The fields of ParsedMail that submissionOf reads from the header block. */
export interface HeaderBlock {
  headers: Headers;
  headerLines: HeaderLines;
  subject?: string;
  from?: AddressObject;
  to?: AddressObject | AddressObject[];
  cc?: AddressObject | AddressObject[];
  replyTo?: AddressObject;
}

/** mailparser's reading of a list of fields (internal to it: used only where it is there). */
type ProcessHeaders = (lines: { key: string; line: string }[]) => Headers;

/** Read once: the method, or null when this mailparser has none (then every block goes to simpleParser). */
let processHeaders: ProcessHeaders | null | undefined;

function processorOf(mailparser: { MailParser: typeof MailParser }): ProcessHeaders | null {
  if (processHeaders !== undefined) return processHeaders;
  // One parser, never written to: processHeaders only reads its libmime and its formatting methods.
  const parser = new mailparser.MailParser({}) as unknown as { processHeaders?: ProcessHeaders };
  const method = parser.processHeaders;
  processHeaders = typeof method === 'function' ? (lines) => method.call(parser, lines) : null;
  return processHeaders;
}

const LF = 0x0a;
const CR = 0x0d;

const isFolding = (line: string) => line.charCodeAt(0) === 0x20 || line.charCodeAt(0) === 0x09;

/**
 * The fields of `head` (a header block and the blank line that ends it) as mailsplit's Headers lists
 * them, `{ key: lower-cased name, line: the field as written, folds joined by CRLF }`; null when the
 * block is not one this reads (see the top of the file).
 */
export function headerLinesOf(head: Buffer): HeaderLines | null {
  // Every LF after a CR (a CR alone is kept in its line, as mailsplit keeps it).
  if (hasBareLf(head)) return null;
  const text = head.toString('latin1');
  let end = text.length;
  while (end > 0 && (text.charCodeAt(end - 1) === LF || text.charCodeAt(end - 1) === CR)) end--;
  const lines: { key: string; line: string }[] = [];
  for (const line of text.slice(0, end).split('\r\n')) {
    if (isFolding(line)) {
      if (lines.length === 0) return null;
      lines[lines.length - 1].line += `\r\n${line}`;
      continue;
    }
    const colon = line.indexOf(':');
    // A line that is no field (mailsplit then names the field by its continuation), and an mbox
    // `From ` or HTTP `POST ` first line, which mailsplit sets apart: mailparser's to read.
    if (colon === -1 || (lines.length === 0 && /^(?:From|POST) /i.test(line))) return null;
    lines.push({ key: line.slice(0, colon).toLowerCase().trim(), line });
  }
  return lines;
}

/** `head` read as simpleParser reads a message of that header block, or null: then simpleParser must read it. */
export function readHeaderBlock(mailparser: { MailParser: typeof MailParser }, head: Buffer): HeaderBlock | null {
  const readFields = processorOf(mailparser);
  const headerLines = readFields && headerLinesOf(head);
  if (!headerLines) return null;
  const headers = readFields(headerLines as { key: string; line: string }[]);
  // The fields simpleParser copies from the headers onto the message (those submissionOf reads).
  return {
    headers,
    headerLines,
    subject: headers.get('subject') as string | undefined,
    from: headers.get('from') as AddressObject | undefined,
    to: headers.get('to') as AddressObject | AddressObject[] | undefined,
    cc: headers.get('cc') as AddressObject | AddressObject[] | undefined,
    replyTo: headers.get('reply-to') as AddressObject | undefined,
  };
}
