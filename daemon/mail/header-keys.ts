// nodemailer normalises a header's name (MimeNode._normalizeHeaderKey: three RegExp replaces and a
// lower-casing) every time a header is set or looked up, about thirty times for each message it
// builds: 8 % of composing and building the drain bench's small message (a CPU profile after
// serialize-message.ts). The answer depends on the name alone, so it is kept per name here, for the
// names the service sets and a bounded number of others (custom headers are tenants' input).
// rememberHeaderKeys() installs it on MimeNode's prototype once per thread, as dkim-body-hash.ts
// installs the body hash; it checks the method is there and answers as before on sample names.
import MimeNode from 'nodemailer/lib/mime-node';

/** Names remembered at most: the service's own are ~25; the rest are custom headers. */
const REMEMBERED_NAMES = 1_000;

type Normalize = (this: unknown, key: unknown) => string;

const SAMPLE_NAMES = [
  'content-type',
  'MIME-Version',
  'x-smtpapi',
  'List-Unsubscribe-Post',
  'dkim-signature',
  'Message-Id',
];

let installed: { restore(): void } | null = null;

/** Makes MimeNode remember normalised header names (see the top of this file). Once per thread. */
export function rememberHeaderKeys(): { restore(): void } {
  if (installed) return installed;
  const prototype = MimeNode.prototype as unknown as { _normalizeHeaderKey: Normalize };
  const original = prototype._normalizeHeaderKey;
  if (typeof original !== 'function') {
    throw new Error('nodemailer’s MimeNode has no _normalizeHeaderKey: header-keys.ts cannot remember its answers');
  }
  const expected = SAMPLE_NAMES.map((name) => original.call(null, name));
  const remembered = new Map<string, string>();
  prototype._normalizeHeaderKey = function normalizeRemembered(key: unknown): string {
    if (typeof key !== 'string') return original.call(this, key);
    let normalized = remembered.get(key);
    if (normalized === undefined) {
      normalized = original.call(this, key);
      if (remembered.size < REMEMBERED_NAMES) remembered.set(key, normalized);
    }
    return normalized;
  };
  if (SAMPLE_NAMES.some((name, index) => prototype._normalizeHeaderKey.call(null, name) !== expected[index])) {
    prototype._normalizeHeaderKey = original;
    throw new Error('header-keys.ts answers differently from nodemailer’s _normalizeHeaderKey: not installed');
  }
  installed = {
    restore() {
      prototype._normalizeHeaderKey = original;
      installed = null;
    },
  };
  return installed;
}
