// The text and HTML parts of a message handed to nodemailer already quoted-printable encoded
// (quoted-printable.ts, byte for byte nodemailer's Encoder at native speed), as whole MIME parts:
// nodemailer's documented `raw` of an alternative ("a pre-built MIME part for text/plain, text/html"),
// which it writes as given in place of the part's headers and encoded content. MailTransports does it
// for every message it builds or relays. The message is the same bytes (test/encoded-parts.test.ts
// builds both with nodemailer and compares them).
//
// A part is encoded here only where nodemailer would encode it as quoted-printable, and only where it is
// a part of a multipart message: a message of one part has its headers in the part, and nodemailer
// writes them. Everything else goes to nodemailer as before.
import type Mail from 'nodemailer/lib/mailer';
import { hasLongerLines, isPlainText } from 'nodemailer/lib/mime-funcs';
import { encodeQuotedPrintable } from './quoted-printable.ts';

export type TextTransferEncoding = '7bit' | 'quoted-printable' | 'base64';

/** Characters nodemailer counts as neither binary nor 8-bit (mime-node _getTextEncoding), and latin letters. */
const NOT_BINARY_RUNS = /[\t\n\r\x20-\x7f]+/g;
const NOT_LATIN_LETTER_RUNS = /[^A-Za-z]+/g;
/** TAB, LF, CR and printable ASCII only: plain text to nodemailer, and nothing but `=` for the encoder to escape. */
const PRINTABLE_ASCII = /^[\t\n\r\x20-\x7e]*$/;

/**
 * Set on a message whose string bodies the composer has already found to be printable ASCII
 * (compose.ts choosesQuotedPrintable), so they are not scanned for it a second time here.
 */
const PRINTABLE_ASCII_BODIES = Symbol('printable ASCII bodies');

type MarkedOptions = Mail.Options & { [PRINTABLE_ASCII_BODIES]?: true };

/** Marks `message`'s bodies as printable ASCII (the caller has tested both). */
export function markPrintableAsciiBodies(message: Mail.Options): void {
  (message as MarkedOptions)[PRINTABLE_ASCII_BODIES] = true;
}

/**
 * The Content-Transfer-Encoding nodemailer's mime-node gives a text part whose content is the string
 * `content`, not empty (getTransferEncoding, with no encoding asked for the part): 7bit for plain text
 * (mime-funcs isPlainText, `plainText` here) in lines of 76 at most, else the message's `textEncoding`,
 * else quoted-printable where latin letters outnumber binary and 8-bit characters. nodemailer counts
 * them in a loop per character; the counts here are what is left of the text once a native replace
 * has dropped everything else.
 */
function chooseTransferEncoding(
  content: string,
  textEncoding: string | undefined,
  plainText: boolean,
): TextTransferEncoding {
  if (plainText && !hasLongerLines(content, 76)) return '7bit';
  // MimeNode keeps the first letter of the option, upper case: 'Q', 'B' or nothing.
  const chosen = (textEncoding ?? '').trim().charAt(0).toUpperCase();
  if (chosen) return chosen === 'Q' ? 'quoted-printable' : 'base64';
  const binary = content.replace(NOT_BINARY_RUNS, '').length;
  const latin = content.replace(NOT_LATIN_LETTER_RUNS, '').length;
  return binary < latin ? 'quoted-printable' : 'base64';
}

/** The transfer encoding nodemailer gives a text part of `content` (chooseTransferEncoding). */
export function textTransferEncoding(content: string, textEncoding?: string): TextTransferEncoding {
  return chooseTransferEncoding(content, textEncoding, isPlainText(content));
}

/**
 * The part as nodemailer writes it when it encodes `content` as quoted-printable: its headers (a child
 * node's are its Content-Type, as mail-composer sets it for text and HTML, and the transfer encoding),
 * a blank line, the encoded content; null when nodemailer would not encode it so.
 */
function encodedPart(
  contentType: string,
  content: string,
  textEncoding: string | undefined,
  knownPrintableAscii: boolean,
): Mail.AttachmentLike | null {
  // Printable ASCII is plain text (isPlainText allows a little more: DEL), told by one scan for both.
  const printableAscii = knownPrintableAscii || PRINTABLE_ASCII.test(content);
  const plainText = printableAscii || isPlainText(content);
  if (chooseTransferEncoding(content, textEncoding, plainText) !== 'quoted-printable') return null;
  const part = {
    // Written with CRLF line ends, as the message goes out (quoted-printable.ts says why).
    raw: `Content-Type: ${contentType}\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n${encodeQuotedPrintable(content, printableAscii, true)}`,
  };
  return part;
}

/**
 * The message with its text and HTML as pre-built quoted-printable parts where nodemailer would have
 * encoded them so: string bodies, with attachments or not, and `textEncoding` (what compose.ts and
 * system mail build). Options that change how nodemailer treats the bodies leave the message as it is.
 */
export function withEncodedTextParts(message: Mail.Options): Mail.Options {
  if (message.raw || message.encoding || message.attachDataUrls || message.alternatives?.length) return message;
  if (message.watchHtml || message.amp || message.icalEvent) return message;
  const text = typeof message.text === 'string' && message.text ? message.text : null;
  const html = typeof message.html === 'string' && message.html ? message.html : null;
  // One body and no attachment: the body is the message's root node, whose headers nodemailer writes.
  const multipart = (text !== null && html !== null) || (message.attachments?.length ?? 0) > 0;
  if (!multipart || (text === null && html === null)) return message;
  const encoded: Mail.Options = { ...message };
  const printable = (message as MarkedOptions)[PRINTABLE_ASCII_BODIES] === true;
  const textPart =
    text === null ? null : encodedPart('text/plain; charset=utf-8', text, message.textEncoding, printable);
  if (textPart) encoded.text = textPart;
  const htmlPart =
    html === null ? null : encodedPart('text/html; charset=utf-8', html, message.textEncoding, printable);
  if (htmlPart) encoded.html = htmlPart;
  return encoded;
}
