// The reply an application wants from an inbound message: its text without the quoted history below it
// and without the sender's signature (Postmark's StrippedTextReply, Mailgun's stripped-text and
// stripped-signature). Mail clients mark the history in a few shapes, each recognised here:
// - a header line "On <date>, <name> wrote:" in the client's language (Gmail wraps it over two or three
//   lines when the name and address are long; Apple Mail writes "On 3 Mar 2024, at 10:00, … wrote:"),
// - Outlook's "-----Original Message-----" or its block of "From:/Sent:/To:/Subject:" lines (localised,
//   often under a rule of underscores, or of dashes where an HTML-only reply's <hr> became text),
//   Android's "-------- Original message --------",
// - lines quoted with ">" to the end of the message (a reply interleaved with quotes is kept whole:
//   cutting at its first quote would drop the answers written between them).
// The signature is what follows the last "-- " line (RFC 3676 §4.3) when it is short, or a client's
// "Sent from my iPhone" line closing the reply.
// Plain string work over a bounded text, run in the reader's thread (parse.ts).

/** How the `On … wrote:` line ends (German, Dutch and Swedish put the name after the verb), by language: English, French, German, Spanish, Italian, Dutch, Portuguese, Swedish/Danish/Norwegian, Polish, Russian, Japanese, Chinese. */
const WROTE =
  /(?:wrote|a écrit|schrieb|escribió|ha scritto|schreef|escreveu|skrev|napisał\(a\)|napisał|napisała|pisze|написал\(а\)|написал|написала|пишет|のメッセージ|写道)(?:\s[^:：]{0,200})?\s*[:：]\s*$/i;
/** How it starts: "On", "Le", "Am", "El", "Il", "Op", "Em", "Den", "Dne", "W dniu", a date (many clients), or a name (Russian clients). */
const WROTE_START = /^(?:On|Le|Am|El|Il|Op|Em|Den|Dne|W dniu|\d{1,4}[-./]\d{1,2}[-./]\d{1,4}|\d{1,2} \w+ \d{4})\b/i;
const ORIGINAL_MESSAGE =
  /^\s*-{2,}\s*(?:Original Message|Original message|Ursprüngliche Nachricht|Message d'origine|Mensaje original|Messaggio originale|Oorspronkelijk bericht|Mensagem original|Ursprungligt meddelande|Wiadomość oryginalna|Исходное сообщение)\s*-{2,}\s*$/i;
/** Outlook's block: a From line, then within a few lines a Sent/Date line (localised names). */
const OUTLOOK_FROM = /^\s*\*?(?:From|De|Von|Van|Da|Från|Od|От)\s*\*?\s*:\s*\S/i;
const OUTLOOK_SENT =
  /^\s*\*?(?:Sent|Date|Envoyé|Gesendet|Datum|Enviado|Fecha|Inviato|Data|Verzonden|Skickat|Wysłano|Отправлено|Дата)\s*\*?\s*:\s*\S/i;
/** The rule above Outlook's block: underscores in its text part, dashes where its HTML's <hr> became text. */
const SEPARATOR = /^\s*(?:_{10,}|-{10,})\s*$/;
const MOBILE_SIGNATURE =
  /^(?:Sent from my .{1,40}|Sent from (?:Mail|Outlook|Yahoo Mail) for .{1,30}|Get Outlook for .{1,30}|Sent from Outlook|Envoyé de mon .{1,40}|Von meinem .{1,40} gesendet|Enviado desde mi .{1,40}|Inviato da .{1,40}|Verzonden vanaf mijn .{1,40})$/i;
/** A "-- " delimiter further from the end than this is not a signature's (a long text with a dashed line). */
const MAX_SIGNATURE_LINES = 15;
/** Gmail folds a long "On … wrote:" over at most three lines. */
const MAX_WROTE_LINES = 3;

export interface StrippedReply {
  strippedText: string;
  strippedSignature: string | null;
}

const isQuoted = (line: string) => /^\s*>/.test(line);
const isBlank = (line: string) => line.trim() === '';

/** The index of the line starting a `On … wrote:` header that ends at line `end`, or -1. */
function wroteHeaderStart(lines: string[], end: number): number {
  if (!WROTE.test(lines[end]) || isQuoted(lines[end])) return -1;
  for (let start = end; start > end - MAX_WROTE_LINES && start >= 0; start--) {
    if (start < end && isBlank(lines[start])) break;
    if (WROTE_START.test(lines[start].trim())) return start;
  }
  // A header in a shape not listed, still one short line ending in "wrote:" and naming a time or an
  // address ("Here is what he wrote:" in the reply itself names neither).
  return lines[end].length <= 200 && /\d|@/.test(lines[end]) ? end : -1;
}

/** The line where quoted history begins, or lines.length when there is none. */
function historyStart(lines: string[]): number {
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (ORIGINAL_MESSAGE.test(line)) return i;
    if (OUTLOOK_FROM.test(line) && lines.slice(i + 1, i + 5).some((next) => OUTLOOK_SENT.test(next))) {
      let above = i - 1;
      while (above >= 0 && isBlank(lines[above])) above--;
      return above >= 0 && SEPARATOR.test(lines[above]) ? above : i;
    }
    const wrote = wroteHeaderStart(lines, i);
    if (wrote >= 0) return wrote;
  }
  // A trailing run of quoted lines (blank lines among them), with nothing written after it.
  let end = lines.length;
  while (end > 0 && (isQuoted(lines[end - 1]) || isBlank(lines[end - 1]))) end--;
  const quotedTail = lines.slice(end).some(isQuoted);
  return quotedTail ? end : lines.length;
}

function trimEnd(lines: string[]): string[] {
  let end = lines.length;
  while (end > 0 && isBlank(lines[end - 1])) end--;
  return lines.slice(0, end);
}

/** The reply without quoted history and signature, and the signature when one was found. */
export function stripReply(text: string): StrippedReply {
  const all = text.replace(/\r\n?/g, '\n').split('\n');
  const reply = trimEnd(all.slice(0, historyStart(all)));
  // RFC 3676's delimiter is "-- "; many clients strip the trailing space.
  let delimiter = -1;
  for (let i = reply.length - 1; i >= 0 && i >= reply.length - 1 - MAX_SIGNATURE_LINES; i--) {
    if (reply[i] === '-- ' || reply[i] === '--') {
      delimiter = i;
      break;
    }
  }
  if (delimiter >= 0) {
    const signature = trimEnd(reply.slice(delimiter + 1)).join('\n');
    return {
      strippedText: trimEnd(reply.slice(0, delimiter)).join('\n').trim(),
      strippedSignature: signature.trim() === '' ? null : signature,
    };
  }
  const last = reply.length - 1;
  if (last >= 0 && MOBILE_SIGNATURE.test(reply[last].trim())) {
    return { strippedText: trimEnd(reply.slice(0, last)).join('\n').trim(), strippedSignature: reply[last].trim() };
  }
  return { strippedText: reply.join('\n').trim(), strippedSignature: null };
}
