// CRLF line ends at native speed. The capture transport asked nodemailer for `newline: 'windows'`,
// whose LeWindows stream looks at every byte of the message in JavaScript for a bare LF (0.5–1.0 ms of
// each 100 KB message); the built message is in one buffer anyway, so here one RegExp replace over it
// does the same (0.1 ms, bench/compose-sign.ts). The transform runs after DKIM signing in nodemailer's pipeline (relaxed
// canonicalisation reads a bare LF as a line end, as it does CRLF), so the signed bytes do not change;
// test/line-ends.test.ts checks the output is LeWindows' byte for byte.
//
// Most messages have no bare LF at all (nodemailer and the quoted-printable encoder write CRLF), so the
// replace is only run where lineEndsOf finds one: a walk from LF to LF by String#indexOf, which
// searches for one character natively, took 14 µs over a 100 KB CRLF text where the RegExp's scan
// took 56–99 µs (its lookbehind is tried at every LF).

const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;

/** An LF that no CR precedes. */
const BARE_LF = /(?<!\r)\n/g;

export interface LineEnds {
  /** Some LF has no CR before it. */
  bareLf: boolean;
  /** Some line end (LF or CRLF) has a space or tab right before it. */
  whitespaceBefore: boolean;
}

/** What the line ends of `text` hold, in one walk from LF to LF (latin1 or UTF-16 text alike). */
export function lineEndsOf(text: string): LineEnds {
  let bareLf = false;
  let whitespaceBefore = false;
  for (let lf = text.indexOf('\n'); lf !== -1 && !(bareLf && whitespaceBefore); lf = text.indexOf('\n', lf + 1)) {
    let before = lf > 0 ? text.charCodeAt(lf - 1) : -1;
    if (before === CR) before = lf > 1 ? text.charCodeAt(lf - 2) : -1;
    else bareLf = true;
    if (before === SPACE || before === TAB) whitespaceBefore = true;
  }
  return { bareLf, whitespaceBefore };
}

/** Whether `bytes` hold an LF that no CR precedes: the same walk from LF to LF on bytes (a string of a whole body cost 0.2 ms). */
export function hasBareLf(bytes: Buffer): boolean {
  for (let lf = bytes.indexOf(0x0a); lf !== -1; lf = bytes.indexOf(0x0a, lf + 1))
    if (lf === 0 || bytes[lf - 1] !== CR) return true;
  return false;
}

/** `message` with every LF that no CR precedes made CRLF, as nodemailer's LeWindows writes it. */
export function withCrlfLineEnds(message: Buffer): Buffer {
  const text = message.toString('latin1');
  if (!lineEndsOf(text).bareLf) return message;
  return Buffer.from(text.replace(BARE_LF, '\r\n'), 'latin1');
}
