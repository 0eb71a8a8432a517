// DANE for SMTP (RFC 7672): TLSA records at `_25._tcp.<mx host>`, believed only when the validating
// resolver marks the answer authentic (AD). DANE-EE (usage 3) pins the server's own certificate or key,
// names and dates not checked (§3.1.1); DANE-TA (usage 2) pins an authority in the chain the server
// sends, and the name is checked (§3.1.2). PKIX usages (0, 1) are unusable for SMTP (§3.1.3).
import { createHash, X509Certificate } from 'node:crypto';
import type { DetailedPeerCertificate, TLSSocket } from 'node:tls';
import { recordData, type DnsClient } from './dns-query.ts';

export interface TlsaRecord {
  usage: number;
  selector: number;
  matchingType: number;
  /** Certificate association data, hex. */
  data: string;
}

export type DaneLookup =
  /** Authenticated TLSA records: TLS is mandatory; `usable` empty means encrypted but unauthenticated (§2.2). */
  | { kind: 'dane'; usable: TlsaRecord[]; all: TlsaRecord[] }
  /** No TLSA records, or not from a validated zone: DANE does not apply to this host. */
  | { kind: 'none' }
  /** A signed MX whose TLSA look-up failed (SERVFAIL, timeout): the host cannot be used safely (§2.2.1). */
  | { kind: 'failed'; failure: 'tlsa-invalid' | 'dnssec-invalid'; detail: string };

export async function lookupTlsa(dns: DnsClient, host: string): Promise<DaneLookup> {
  const reply = await dns.query(`_25._tcp.${host}`, 'TLSA');
  switch (reply.kind) {
    case 'timeout':
      return { kind: 'failed', failure: 'dnssec-invalid', detail: `TLSA of ${host}: DNS timeout` };
    case 'error':
      return { kind: 'failed', failure: 'dnssec-invalid', detail: `TLSA of ${host}: ${reply.code}` };
    case 'nodata':
    case 'nxdomain':
      return { kind: 'none' };
    case 'answer':
      break;
  }
  if (!reply.authentic) return { kind: 'none' };
  const all = reply.answers.map((answer) => {
    const data = recordData<{ usage: number; selector: number; matchingType: number; certificate: Buffer }>(answer);
    return {
      usage: data.usage,
      selector: data.selector,
      matchingType: data.matchingType,
      data: data.certificate.toString('hex'),
    };
  });
  const usable = all.filter(
    (record) => (record.usage === 2 || record.usage === 3) && record.selector <= 1 && record.matchingType <= 2,
  );
  return { kind: 'dane', usable, all };
}

function associationData(certificate: X509Certificate, record: TlsaRecord): string {
  const selected =
    record.selector === 0 ? certificate.raw : certificate.publicKey.export({ type: 'spki', format: 'der' });
  if (record.matchingType === 0) return selected.toString('hex');
  return createHash(record.matchingType === 1 ? 'sha256' : 'sha512')
    .update(selected)
    .digest('hex');
}

/** The chain the server sent, leaf first, as X509Certificates. */
function peerChain(socket: TLSSocket): X509Certificate[] {
  const chain: X509Certificate[] = [];
  let current: DetailedPeerCertificate | undefined = socket.getPeerCertificate(true);
  while (current?.raw && chain.length < 10) {
    chain.push(new X509Certificate(current.raw));
    if (current.issuerCertificate === current) break; // a self-signed end of the chain points at itself
    current = current.issuerCertificate;
  }
  return chain;
}

/**
 * Checks the peer against the usable records: null when one matches, else the RFC 8460 result type.
 * DANE-TA: the pinned certificate must be in the chain and have signed down to the leaf, and the leaf
 * must carry the MX host name.
 */
export function verifyDanePeer(socket: TLSSocket, usable: TlsaRecord[], host: string): string | null {
  const chain = peerChain(socket);
  if (chain.length === 0) return 'validation-failure';
  const [leaf] = chain;
  if (usable.some((record) => record.usage === 3 && associationData(leaf, record) === record.data)) return null;
  for (const record of usable.filter((r) => r.usage === 2)) {
    const anchorIndex = chain.findIndex((certificate) => associationData(certificate, record) === record.data);
    if (anchorIndex < 0) continue;
    let signed = true;
    for (let i = 0; i < anchorIndex; i++) if (!chain[i].verify(chain[i + 1].publicKey)) signed = false;
    if (!signed) continue;
    return leaf.checkHost(host) ? null : 'certificate-host-mismatch';
  }
  return 'validation-failure';
}
