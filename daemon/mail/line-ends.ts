// CRLF line ends at native speed. The capture transport asked nodemailer for `newline: 'windows'`,
// whose LeWindows stream looks at every byte of the message in JavaScript for a bare LF (0.5–1.0 ms of
// each 100 KB message); the built message is in one buffer anyway, so here one RegExp replace over it
// does the same (0.1 ms, bench/compose-sign.ts). The transform runs after DKIM signing in nodemailer's pipeline (relaxed
// canonicalisation reads a bare LF as a line end, as it does CRLF), so the signed bytes do not change;
// test/line-ends.test.ts checks the output is LeWindows' byte for byte.

/** An LF that no CR precedes. */
const BARE_LF = /(?<!\r)\n/g;

/** `message` with every LF that no CR precedes made CRLF, as nodemailer's LeWindows writes it. */
export function withCrlfLineEnds(message: Buffer): Buffer {
  const text = message.toString('latin1');
  const crlf = text.replace(BARE_LF, '\r\n');
  return crlf.length === text.length ? message : Buffer.from(crlf, 'latin1');
}
