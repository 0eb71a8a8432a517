// ARC sealing of a forwarded message (RFC 8617), for the forward action of inbound routes
// (modules/inbound-routing/forward.ts): the message leaves our servers with its original DKIM
// signature, which a receiver may no longer be able to trust alone (a mailing-list footer, a
// re-encoding on the way); the seal carries, under the platform's key, the Authentication-Results we
// computed when it arrived, so a receiver that trusts us can rely on them. mailauth builds the three
// headers (ARC-Seal, ARC-Message-Signature, ARC-Authentication-Results) over the message as it leaves.
import type { KeyObject } from 'node:crypto';

/** What the seal says: our Authentication-Results value at receipt and the chain's state then. */
export interface ArcSealRequest {
  /** `<authserv-id>; spf=…; dkim=…` as our Authentication-Results header had it (folding kept). */
  authResults: string;
  /** `none`: no chain arrived (this seal is i=1); `pass`: the chain that arrived validated. */
  cv: 'none' | 'pass';
}

/** The message with its ARC headers for the next instance on top, sealed with `key`. */
export async function arcSealed(
  raw: Buffer,
  key: { domainName: string; keySelector: string; privateKey: KeyObject | string },
  request: ArcSealRequest,
): Promise<Buffer> {
  // Loaded on first use: mailauth costs ≈ 0.4 s to load (docs/boot.md).
  const { sealMessage } = await import('mailauth/lib/arc/index.js');
  const privateKey =
    typeof key.privateKey === 'string' ? key.privateKey : key.privateKey.export({ type: 'pkcs8', format: 'pem' });
  const headers = await sealMessage(raw, {
    signingDomain: key.domainName,
    selector: key.keySelector,
    privateKey,
    authResults: request.authResults,
    cv: request.cv,
  } as never);
  return Buffer.concat([headers, raw]);
}
