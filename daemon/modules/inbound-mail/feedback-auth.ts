// Who may complain at fbl@: a feedback-loop operator, proven by a valid DKIM signature from one of the
// domains of the platform setting feedbackLoopDomains (or a subdomain of one). Anyone can write an ARF
// report naming a send and its own address (both are in any message it received), so an unsigned or
// foreign one changes nothing. Verified with mailauth against DNS_SERVERS (the resolver domain checks
// use), each look-up bounded like theirs.
// A signature vouches only for the header instances it covers (the bottom-most of each name it lists),
// while the MIME reader reads the first: one unsigned Content-Type added above the signed one would pick
// what is read and keep the signature valid (RFC 6376 §8.15). So a report counts only when its header
// has no duplicated singleton field (RFC 5322 §3.6) and the Content-Type it is read by is the signed one.
import { installMailauthPatches } from './mailauth-load.ts';
import { Resolver } from 'node:dns/promises';
import { DNS_TIMEOUT_MS, normalizeHostName } from '../domains/dns-lookup.ts';
import { first, type Fields } from './mime.ts';

export type FeedbackSigner = { verified: true; signer: string } | { verified: false; reason: string };

/** A DNS resolver in the shape mailauth calls (`resolve(name, rrtype)`), on the configured servers. */
export function mailauthResolver(dnsServers: string[]) {
  const resolver = new Resolver({ timeout: DNS_TIMEOUT_MS, tries: 1 });
  if (dnsServers.length > 0) resolver.setServers(dnsServers);
  return (name: string, rrtype: string) => resolver.resolve(name, rrtype);
}

const isListed = (domain: string, operators: string[]) =>
  operators.some((operator) => {
    const listed = normalizeHostName(operator);
    return domain === listed || domain.endsWith(`.${listed}`);
  });

/**
 * What DKIM verification found, as plain data (it runs in the reader's thread: reader-thread.ts).
 * `unsignedBodyBytes`: the canonical body bytes past the signature's `l=` length, which it does not cover.
 * `signedContentType`: the value of the Content-Type instance the signature covers, unfolded; null when
 * its `h=` does not list Content-Type.
 */
export type DkimSignatures =
  | {
      results: Array<{
        signingDomain: string;
        result: string;
        unsignedBodyBytes: number;
        signedContentType: string | null;
      }>;
    }
  | { error: string };

/** Header fields RFC 5322 §3.6 (and RFC 2045 for MIME) allows at most once in a message. */
const SINGLETON_FIELDS: Record<string, string> = {
  from: 'From',
  sender: 'Sender',
  'reply-to': 'Reply-To',
  to: 'To',
  cc: 'Cc',
  bcc: 'Bcc',
  subject: 'Subject',
  date: 'Date',
  'message-id': 'Message-ID',
  'in-reply-to': 'In-Reply-To',
  references: 'References',
  'mime-version': 'MIME-Version',
  'content-type': 'Content-Type',
  'content-transfer-encoding': 'Content-Transfer-Encoding',
};

/** `Content-Type` appearing twice and the like, as `2 Content-Type headers`; empty when none is. */
export function duplicatedSingletons(headers: Fields): string[] {
  return Object.entries(SINGLETON_FIELDS).flatMap(([name, display]) => {
    const count = headers.get(name)?.length ?? 0;
    return count > 1 ? [`${count} ${display} headers`] : [];
  });
}

/** Folding whitespace aside (a boundary is case-sensitive), so that the signed line and the parsed value compare. */
const sameFieldValue = (a: string, b: string) => a.replace(/\s+/g, ' ').trim() === b.replace(/\s+/g, ' ').trim();

/**
 * Every DKIM signature of the raw message checked against its published key. O(size) (the body is
 * hashed), so it runs in the inbound reader's thread, never on the event loop.
 */
export async function checkDkimSignatures(raw: Buffer, dnsServers: string[]): Promise<DkimSignatures> {
  try {
    // Loaded on first use: mailauth (with joi and tldts) cost ≈ 0.4 s of every boot otherwise (docs/boot.md).
    installMailauthPatches();
    const { dkimVerify } = await import('mailauth/lib/dkim/verify.js');
    const verification = await dkimVerify(raw, { resolver: mailauthResolver(dnsServers) as never });
    const results = verification.results as Array<{
      signingDomain?: string;
      status: { result: string; underSized?: number };
      signingHeaders?: { headers: string[] };
    }>;
    return {
      results: results.map((r) => {
        // The header lines the signature covers, as they are in the message (one per name in h=).
        const line = r.signingHeaders?.headers.find((header) => /^content-type[ \t]*:/i.test(header));
        return {
          signingDomain: r.signingDomain ?? '',
          result: r.status.result,
          unsignedBodyBytes: r.status.underSized ?? 0,
          signedContentType: line
            ? line
                .slice(line.indexOf(':') + 1)
                .replace(/\s+/g, ' ')
                .trim()
            : null,
        };
      }),
    };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/**
 * The first passing signature from a listed operator that covers the whole body and the Content-Type
 * the report is read by, or why there is none. `headers` is the message's header as the MIME reader
 * parsed it (mime.ts readReport).
 * A signature with `l=` shorter than the body passes DKIM while whatever follows its length is anyone's:
 * a report appended to (or, with `l=0`, put in place of) a message the operator once signed would count.
 */
export function judgeFeedbackSigner(signatures: DkimSignatures, operators: string[], headers: Fields): FeedbackSigner {
  const duplicated = duplicatedSingletons(headers);
  if (duplicated.length > 0)
    return {
      verified: false,
      reason: `it carries ${duplicated.join(', ')}, where RFC 5322 allows one: a header added above the signed one would be the one read while the signature still verifies (RFC 6376 §8.15)`,
    };
  if ('error' in signatures)
    return { verified: false, reason: `its DKIM signature could not be checked (${signatures.error})` };
  const signed = signatures.results.filter((result) => result.signingDomain);
  if (signed.length === 0) return { verified: false, reason: 'it carries no DKIM signature' };
  const passing = signed.filter((result) => result.result === 'pass');
  const fromOperators = passing.filter((result) => isListed(normalizeHostName(result.signingDomain), operators));
  const whole = fromOperators.filter((result) => result.unsignedBodyBytes === 0);
  const readBy = first(headers, 'content-type') ?? '';
  const listed = whole.find(
    (result) => result.signedContentType !== null && sameFieldValue(result.signedContentType, readBy),
  );
  if (listed) return { verified: true, signer: normalizeHostName(listed.signingDomain) };
  if (whole.length > 0)
    return {
      verified: false,
      reason: `its DKIM signature (d=${whole[0].signingDomain}) does not cover the Content-Type header the report is read by`,
    };
  if (fromOperators.length > 0) {
    const partial = fromOperators[0];
    return {
      verified: false,
      reason: `its DKIM signature (d=${partial.signingDomain}) leaves ${partial.unsignedBodyBytes} bytes of the body unsigned (l=)`,
    };
  }
  if (passing.length > 0)
    return {
      verified: false,
      reason: `it is signed by ${passing.map((r) => r.signingDomain).join(', ')}, not a listed feedback-loop operator`,
    };
  const detail = signed.map((r) => `d=${r.signingDomain} ${r.result}`).join(', ');
  return { verified: false, reason: `its DKIM signature does not verify (${detail})` };
}
