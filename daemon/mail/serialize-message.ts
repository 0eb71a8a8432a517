// A compiled message written out in one synchronous pass: the bytes nodemailer's MimeNode streams
// (createReadStream: each node's headers, content and boundaries, the last line end, and the DKIM
// signature its Mailer adds as a process function), without its streams. nodemailer streams every
// node through a PassThrough, a pipeline (an AbortController and a DOMException per call on Node 20),
// an encoder stream and a setImmediate per step, and its signer buffers the whole message again to
// find the headers: in a CPU profile of composing the bench's small message those streams were about a
// third of the build. Here the parts are strings and buffers joined once.
//
// Only what can be written without reading a stream is written here: string or Buffer content (and
// `raw` parts, as encoded-parts.ts makes them) in 7bit, 8bit, quoted-printable text (the native
// encoder, quoted-printable.ts, byte for byte nodemailer's) or base64; no transforms, no newline
// option, at most the Mailer's own DKIM process function. Anything else (a stream, a path, a URL,
// binary quoted-printable, signing options per message) answers null and is streamed by nodemailer as
// before. test/serialize-message.test.ts compares the two byte for byte, signed and not.
import { createHash } from 'node:crypto';
import type MimeNode from 'nodemailer/lib/mime-node';
import type MailMessage from 'nodemailer/lib/mailer/mail-message';
import DKIM from 'nodemailer/lib/dkim';
import MessageParser from 'nodemailer/lib/dkim/message-parser';
import sign from 'nodemailer/lib/dkim/sign';
import { encode as base64, wrap as base64Lines } from 'nodemailer/lib/base64';
import { encodeQuotedPrintable } from './quoted-printable.ts';
import { RelaxedBodyHasher } from './dkim-body-hash.ts';

/** What of a MimeNode this reads beyond its typed surface (nodemailer's mime-node stream()). */
interface NodeInternals {
  _raw?: unknown;
  content?: unknown;
  childNodes: NodeInternals[];
  multipart?: string | false;
  boundary?: string | false;
  newline?: string;
  _transforms: unknown[];
  _processFuncs: unknown[];
  getHeader(key: string): unknown;
  getTransferEncoding(): string | false;
  buildHeaders(): string;
}

type Part = string | Buffer;

const LF = 0x0a;
const CR = 0x0d;

/**
 * Whether every node can be written without a stream (checked before anything is built: building a
 * node's headers sets some of them, and a message that cannot be written here goes to nodemailer).
 */
function writable(node: NodeInternals): boolean {
  if (node._raw) {
    if (typeof node._raw !== 'string' && !Buffer.isBuffer(node._raw)) return false;
  } else if (node.content) {
    if (typeof node.content !== 'string' && !Buffer.isBuffer(node.content)) return false;
    // Outside text/* nodemailer encodes CR and LF too (its binary mode); the native encoder is text's.
    // (The Content-Type header, as getTransferEncoding reads it: the node's contentType is set only
    // once its headers are built.)
    const contentType = String(node.getHeader('Content-Type') ?? '')
      .toLowerCase()
      .trim();
    const textContent = typeof node.content === 'string' && contentType.startsWith('text/');
    if (node.getTransferEncoding() === 'quoted-printable' && !textContent) return false;
  }
  return node.childNodes.every(writable);
}

/** A node's content as its transfer encoding writes it (writable() said which kinds come here). */
function encodedContent(node: NodeInternals, content: string | Buffer): Part {
  const encoding = node.getTransferEncoding();
  // nodemailer's base64 Encoder writes the whole content in lines of 76, as its wrap() does.
  if (encoding === 'base64') return base64Lines(base64(content), 76);
  if (encoding === 'quoted-printable') return encodeQuotedPrintable(content as string);
  return content;
}

/** Appends what stream() writes for `node`: its headers and content (or its raw part), then its children. */
function appendNode(node: NodeInternals, parts: Part[]): void {
  if (node._raw) {
    parts.push(node._raw as Part);
  } else {
    parts.push(`${node.buildHeaders()}\r\n\r\n`);
    if (node.content) parts.push(encodedContent(node, node.content as Part));
  }
  if (!node.multipart) return;
  node.childNodes.forEach((child, index) => {
    parts.push(`${index > 0 ? '\r\n' : ''}--${node.boundary}\r\n`);
    appendNode(child, parts);
  });
  parts.push(`\r\n--${node.boundary}--\r\n`);
}

/** nodemailer's LastNewline: the message ends with a line end. */
function withLastNewline(message: Buffer): Buffer {
  const last = message.length ? message[message.length - 1] : -1;
  if (last === LF) return message;
  return Buffer.concat([message, Buffer.from(last === CR ? '\n' : '\r\n')]);
}

/** Where the header block ends (after its blank line), as nodemailer's DKIM MessageParser finds it. */
function headerEnd(message: Buffer): number {
  for (let lf = message.indexOf(LF, 1); lf !== -1; lf = message.indexOf(LF, lf + 1)) {
    if (message[lf - 1] === LF || (message[lf - 1] === CR && lf > 1 && message[lf - 2] === LF)) return lf + 1;
  }
  return message.length;
}

/** nodemailer's DKIM signer (dkim/index.js) over a message in hand: its signature fields, then the message. */
function signed(message: Buffer, options: ConstructorParameters<typeof DKIM>[0]): Buffer {
  const dkim = new DKIM(options);
  const hashAlgo = dkim.options.hashAlgo || 'sha256';
  const end = headerEnd(message);
  const rawHeaders = message.subarray(0, end);
  const body = message.subarray(end);
  const hash = createHash(hashAlgo);
  const hasher = new RelaxedBodyHasher(hash);
  hasher.update(body);
  hasher.end();
  const bodyHash = hash.digest('base64');
  const headers = MessageParser.prototype.parseHeaders.call({ rawHeaders } as unknown as MessageParser);
  const fields: Buffer[] = [];
  for (const key of dkim.keys) {
    const field = sign(headers, hashAlgo, bodyHash, {
      domainName: key.domainName,
      keySelector: key.keySelector,
      privateKey: key.privateKey,
      headerFieldNames: dkim.options.headerFieldNames,
      skipFields: dkim.options.skipFields,
    });
    if (field) fields.push(Buffer.from(`${field}\r\n`));
  }
  return fields.length ? Buffer.concat([...fields, message]) : message;
}

/**
 * The message nodemailer's Mailer compiled into `mail.message`, as createReadStream would write it,
 * DKIM-signed where the message's options ask; null when a part needs nodemailer's streams.
 */
export function serializeMessage(mail: MailMessage): Buffer | null {
  const root = mail.message as unknown as NodeInternals & MimeNode;
  const dkim = mail.data.dkim;
  const extraDkimOptions = (mail.data as { _dkim?: unknown })._dkim;
  if (root._transforms.length || root.newline || extraDkimOptions) return null;
  // The Mailer adds one process function, its signer, when the message has DKIM options.
  if (root._processFuncs.length !== (dkim ? 1 : 0)) return null;
  if (!writable(root)) return null;
  const parts: Part[] = [];
  appendNode(root, parts);
  const message = withLastNewline(
    Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : part))),
  );
  return dkim ? signed(message, dkim) : message;
}
