// Who may complain at fbl@: a feedback-loop operator, proven by a valid DKIM signature from one of the
// domains of the platform setting feedbackLoopDomains (or a subdomain of one). Anyone can write an ARF
// report naming a send and its own address (both are in any message it received), so an unsigned or
// foreign one changes nothing. Verified with mailauth against DNS_SERVERS (the resolver domain checks
// use), each look-up bounded like theirs.
import { Resolver } from 'node:dns/promises';
import { DNS_TIMEOUT_MS, normalizeHostName } from '../domains/dns-lookup.ts';

export type FeedbackSigner = { verified: true; signer: string } | { verified: false; reason: string };

/** A DNS resolver in the shape mailauth calls (`resolve(name, rrtype)`), on the configured servers. */
function mailauthResolver(dnsServers: string[]) {
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
 */
export type DkimSignatures =
  { results: Array<{ signingDomain: string; result: string; unsignedBodyBytes: number }> } | { error: string };

/**
 * Every DKIM signature of the raw message checked against its published key. O(size) (the body is
 * hashed), so it runs in the inbound reader's thread, never on the event loop.
 */
export async function checkDkimSignatures(raw: Buffer, dnsServers: string[]): Promise<DkimSignatures> {
  try {
    // Loaded on first use: mailauth (with joi and tldts) cost ≈ 0.4 s of every boot otherwise (docs/boot.md).
    const { dkimVerify } = await import('mailauth/lib/dkim/verify.js');
    const verification = await dkimVerify(raw, { resolver: mailauthResolver(dnsServers) as never });
    const results = verification.results as Array<{
      signingDomain?: string;
      status: { result: string; underSized?: number };
    }>;
    return {
      results: results.map((r) => ({
        signingDomain: r.signingDomain ?? '',
        result: r.status.result,
        unsignedBodyBytes: r.status.underSized ?? 0,
      })),
    };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/**
 * The first passing signature from a listed operator that covers the whole body, or why there is none.
 * A signature with `l=` shorter than the body passes DKIM while whatever follows its length is anyone's:
 * a report appended to (or, with `l=0`, put in place of) a message the operator once signed would count.
 */
export function judgeFeedbackSigner(signatures: DkimSignatures, operators: string[]): FeedbackSigner {
  if ('error' in signatures)
    return { verified: false, reason: `its DKIM signature could not be checked (${signatures.error})` };
  const signed = signatures.results.filter((result) => result.signingDomain);
  if (signed.length === 0) return { verified: false, reason: 'it carries no DKIM signature' };
  const passing = signed.filter((result) => result.result === 'pass');
  const fromOperators = passing.filter((result) => isListed(normalizeHostName(result.signingDomain), operators));
  const listed = fromOperators.find((result) => result.unsignedBodyBytes === 0);
  if (listed) return { verified: true, signer: normalizeHostName(listed.signingDomain) };
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
