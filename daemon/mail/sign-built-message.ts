// The DKIM signature of a message its client built (an SMTP submission that leaves as it came:
// smtp/submission-spool.ts), as the messages the service composes are signed: relaxed/relaxed,
// rsa-sha256, the headers of DKIM_SIGNED_HEADERS chosen and canonicalised by nodemailer's signer
// (sign.relaxedHeaders), the body hashed by dkim-body-hash.ts, the tags written as nodemailer writes
// them. One difference: the RSA signature is made in libuv's thread pool (crypto.sign with a
// callback), not on the event loop. It is most of a signature's CPU (~0.6 ms of 2048-bit RSA a
// message), and the SMTP edge that signs here is one event loop that paces every submission
// (docs/smtp.md, "Performance"): off the loop, it runs on the other core beside the next message.
import { createHash, sign as rsaSign } from 'node:crypto';
import { promisify } from 'node:util';
import { domainToASCII } from 'node:url';
import relaxed from 'nodemailer/lib/dkim/sign';
import { foldLines } from 'nodemailer/lib/mime-funcs';
import { RelaxedBodyHasher } from './dkim-body-hash.ts';
import { DKIM_SIGNED_HEADERS, type DkimSigningOptions } from './compose.ts';

const signInPool = promisify(rsaSign);

/** A header field as it goes out: its name in lower case, and the field (folded lines included) as latin1. */
export interface HeaderField {
  key: string;
  line: string;
}

/** RFC 6376 §3.4.2 relaxed value of one field (what nodemailer's signer hashes for the signature field itself). */
function relaxedValue(field: string): string {
  return field
    .slice(field.indexOf(':') + 1)
    .replace(/\r?\n/g, '')
    .replace(/[ \t]+/g, ' ')
    .replace(/^ | $/g, '');
}

/** A tag value without what would end it or open another tag. */
const tagValue = (value: string) => value.replace(/[\x00-\x1f\x7f;=]/g, '');

/**
 * The `DKIM-Signature: …` field (folded, no final line end) of the message whose header fields are
 * `headers` (in order) and whose body is `body`, signed with the domain's key.
 */
export async function dkimSignatureField(
  headers: HeaderField[],
  body: Buffer,
  dkim: DkimSigningOptions,
): Promise<string> {
  const hash = createHash('sha256');
  const hasher = new RelaxedBodyHasher(hash);
  hasher.update(body);
  hasher.end();
  const canonical = relaxed.relaxedHeaders(headers, DKIM_SIGNED_HEADERS);
  const tags = [
    'v=1',
    'a=rsa-sha256',
    'c=relaxed/relaxed',
    `d=${domainToASCII(tagValue(dkim.domainName)) || tagValue(dkim.domainName)}`,
    'q=dns/txt',
    `s=${tagValue(dkim.keySelector)}`,
    `bh=${hash.digest('base64')}`,
    `h=${tagValue(canonical.fieldNames)}`,
  ].join('; ');
  const unsigned = `${foldLines(`DKIM-Signature: ${tags}`, 76)};\r\n b=`;
  const data = Buffer.from(`${canonical.headers}dkim-signature:${relaxedValue(unsigned)}`, 'latin1');
  const signature = (await signInPool('sha256', data, dkim.privateKey)).toString('base64');
  return unsigned + signature.replace(/(^.{73}|.{75}(?!\r?\n|\r))/g, '$&\r\n ').trim();
}
