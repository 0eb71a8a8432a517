// What the CLI will send where. Passwords, refresh tokens, access tokens and API keys never cross
// plain http:// to another machine: a request that carries a credential or a body to a non-loopback
// http:// URL is refused before any connection is opened, unless the user opts into it for a lab
// (--insecure / SVC_INSECURE=1), and then a warning is printed every time. Private CAs are trusted
// with --ca / SVC_CA_FILE (or Node's own NODE_EXTRA_CA_CERTS), and a certificate the CLI does not
// trust is reported in a sentence that names the fix.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { rootCertificates } from 'node:tls';
import { Agent, fetch as undiciFetch } from 'undici';
import { CliFailure, EXIT } from './errors.ts';

export interface TransportSettings {
  /** Allow credentials over plain http:// to a non-loopback host (lab setups only). */
  insecure: boolean;
  /** A PEM file of extra certificate authorities to trust. */
  caFile?: string;
}

export class InsecureTransportError extends CliFailure {
  constructor(baseUrl: string) {
    super(
      `Refusing to send credentials in clear text to ${baseUrl}: use https:// (serve the daemon with TLS_CERT/TLS_KEY, or behind a TLS proxy), ` +
        'or pass --insecure (SVC_INSECURE=1) if this is a lab network you trust.',
      EXIT.usage,
      'INSECURE_TRANSPORT',
    );
  }
}

export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || /^::ffff:127\./.test(host);
  return false;
}

/** Throws before anything is sent when a credential would travel in clear to another machine; answers whether to warn. */
export function checkTransport(baseUrl: string, carriesSecrets: boolean, settings: TransportSettings): 'ok' | 'warn' {
  const url = new URL(baseUrl);
  if (url.protocol !== 'http:' || !carriesSecrets || isLoopbackHost(url.hostname)) return 'ok';
  if (!settings.insecure) throw new InsecureTransportError(baseUrl);
  return 'warn';
}

export function insecureWarning(baseUrl: string): string {
  return `Warning: --insecure: credentials are being sent in clear text to ${baseUrl}; anyone on the network path can read them.`;
}

/** A fetch that trusts the bundled roots plus the PEM file's authorities; undefined = the global fetch. */
export function fetchTrusting(caFile: string | undefined): typeof fetch | undefined {
  if (!caFile) return undefined;
  let pem: string;
  try {
    pem = readFileSync(caFile, 'utf8');
  } catch (error) {
    throw new CliFailure(
      `Cannot read the CA file ${caFile} (${(error as NodeJS.ErrnoException).code ?? String(error)}): pass a PEM file with --ca.`,
      EXIT.usage,
      'CA_FILE_UNREADABLE',
    );
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----'))
    throw new CliFailure(
      `${caFile} holds no PEM certificate: pass the CA's certificate with --ca.`,
      EXIT.usage,
      'CA_FILE_INVALID',
    );
  const dispatcher = new Agent({ connect: { ca: [...rootCertificates, pem] } });
  // ky hands fetch a global Request; undici's own fetch takes its parts (the two Request classes differ).
  return (async (input: RequestInfo | URL, init?: RequestInit) => {
    if (!(input instanceof Request)) return undiciFetch(String(input), { ...(init as object), dispatcher });
    const body = input.method === 'GET' || input.method === 'HEAD' ? undefined : Buffer.from(await input.arrayBuffer());
    const headers: Record<string, string> = {};
    input.headers.forEach((value, name) => (headers[name] = value));
    return undiciFetch(input.url, {
      method: input.method,
      headers,
      body,
      signal: init?.signal ?? input.signal,
      dispatcher,
    });
  }) as unknown as typeof fetch;
}

const CERTIFICATE_PROBLEMS: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'its certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'its certificate chain ends in a self-signed authority the CLI does not trust',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'its certificate is signed by an authority the CLI does not know',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'its certificate is signed by an authority the CLI does not know',
  CERT_HAS_EXPIRED: 'its certificate has expired',
  CERT_NOT_YET_VALID: 'its certificate is not valid yet (check the clocks)',
  ERR_TLS_CERT_ALTNAME_INVALID: 'its certificate was issued for another name',
};

/** A sentence for a TLS failure (undefined when the error is not one). */
export function describeCertificateProblem(code: string | undefined, baseUrl: string): string | undefined {
  if (!code) return undefined;
  const problem = CERTIFICATE_PROBLEMS[code];
  if (!problem) return undefined;
  const fix =
    code === 'ERR_TLS_CERT_ALTNAME_INVALID'
      ? 'use the name the certificate was issued for in SVC_BASE_URL'
      : code.startsWith('CERT_')
        ? 'renew the certificate on the daemon (TLS_CERT, then SIGHUP)'
        : 'trust its CA with --ca <file> (SVC_CA_FILE) or NODE_EXTRA_CA_CERTS';
  return `The daemon at ${baseUrl} is not trusted: ${problem} (${code}); ${fix}.`;
}
