// Why a relay's TLS handshake failed, in the operator's terms. Node trusts only its bundled public
// CAs: a relay on a private CA (or self-signed) fails STARTTLS until the daemon's environment names
// that CA in NODE_EXTRA_CA_CERTS. nodemailer reports such a failure as ESOCKET and keeps the TLS
// code in `originalCode`.

/** Node's codes for a certificate chain it does not trust. */
const UNTRUSTED_CERTIFICATE_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
]);

export const UNTRUSTED_RELAY_FIX =
  "untrusted certificate: set NODE_EXTRA_CA_CERTS to a PEM file of the relay's CA in the daemon's environment (/etc/svc.env) and restart, or use a relay name with a publicly trusted certificate.";

export interface RelayTlsProblem {
  /** Node's TLS error code, e.g. DEPTH_ZERO_SELF_SIGNED_CERT. */
  code: string;
  /** What to do about it, as a sentence. */
  fix: string;
}

/** The TLS problem behind a relay error, or null when the error is not a certificate problem. */
export function relayTlsProblem(error: unknown): RelayTlsProblem | null {
  const e = (error ?? {}) as { code?: unknown; originalCode?: unknown; cause?: { code?: unknown } };
  const code = [e.originalCode, e.code, e.cause?.code].find((value): value is string => typeof value === 'string');
  if (!code) return null;
  if (UNTRUSTED_CERTIFICATE_CODES.has(code)) return { code, fix: UNTRUSTED_RELAY_FIX };
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return { code, fix: 'the certificate names another host: put the name it was issued for in SMTP_URL.' };
  if (code === 'CERT_HAS_EXPIRED') return { code, fix: "the relay's certificate has expired: renew it on the relay." };
  return null;
}
