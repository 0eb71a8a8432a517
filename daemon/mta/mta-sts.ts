// MTA-STS (RFC 8461): the `_mta-sts` TXT record says a policy exists and its id; the policy itself
// comes over HTTPS from `mta-sts.<domain>` with a certificate valid for that name, and is kept for its
// max_age. A policy still valid in the cache is used when the TXT record or the fetch fails (§5.1), so an
// attacker who blocks DNS or HTTPS cannot turn enforce off for a domain we have seen.
import https from 'node:https';
import { TtlCache } from '../ttl-cache.ts';
import {
  cacheSeconds,
  MAXIMUM_CACHE_SECONDS,
  lookupThrough,
  minimumTtl,
  recordData,
  type DnsClient,
} from './dns-query.ts';

export const STS_FETCH_TIMEOUT_MS = 10_000;
/** RFC 8461 §3.3: a policy body is at most 64 KB. */
const STS_MAX_BODY_BYTES = 64 * 1024;
/** RFC 8461 §3.2: max_age is at most 31557600 s (a year). */
const STS_MAX_AGE_SECONDS = 31_557_600;

export interface StsPolicy {
  mode: 'enforce' | 'testing' | 'none';
  /** `mx:` patterns, lower case; `*.example.com` stands for exactly one more label. */
  mx: string[];
  maxAgeSeconds: number;
  /** The policy text as fetched, for TLS-RPT's `policy-string`. */
  lines: string[];
}

export type StsLookup =
  | { kind: 'policy'; policy: StsPolicy; id: string }
  | { kind: 'none' }
  /** A TXT record exists but its policy could not be fetched or parsed (TLS-RPT: sts-policy-fetch-error / sts-policy-invalid). */
  | { kind: 'failed'; failure: 'sts-policy-fetch-error' | 'sts-policy-invalid' | 'sts-webpki-invalid'; detail: string };

/** The id of the one `v=STSv1` TXT record; several or none mean no policy (§3.1). */
export function stsRecordId(records: string[]): string | null {
  const ours = records.filter((record) => /^v=STSv1\s*(;|$)/.test(record.trim()));
  if (ours.length !== 1) return null;
  const id = /(?:^|;)\s*id=([A-Za-z0-9]{1,32})\s*(?:;|$)/.exec(ours[0]);
  return id ? id[1] : null;
}

export function parseStsPolicy(text: string): StsPolicy | null {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
  const fields = new Map<string, string[]>();
  for (const line of lines) {
    const match = /^([A-Za-z0-9_]+)\s*:\s*(.*)$/.exec(line);
    if (!match) continue;
    const key = match[1].toLowerCase();
    fields.set(key, [...(fields.get(key) ?? []), match[2].trim()]);
  }
  const mode = fields.get('mode')?.[0];
  const maxAge = Number(fields.get('max_age')?.[0]);
  const mx = (fields.get('mx') ?? []).map((pattern) => pattern.toLowerCase().replace(/\.$/, ''));
  if (fields.get('version')?.[0] !== 'STSv1') return null;
  if (mode !== 'enforce' && mode !== 'testing' && mode !== 'none') return null;
  if (!Number.isInteger(maxAge) || maxAge < 0) return null;
  if (mode !== 'none' && mx.length === 0) return null;
  return { mode, mx, maxAgeSeconds: Math.min(maxAge, STS_MAX_AGE_SECONDS), lines };
}

/** RFC 8461 §4.1: an MX host matches a pattern exactly, or a `*.` pattern with one label in its place. */
export function stsAllowsHost(policy: StsPolicy, host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return policy.mx.some((pattern) =>
    pattern.startsWith('*.')
      ? name.endsWith(pattern.slice(1)) && !name.slice(0, -pattern.length + 1).includes('.')
      : name === pattern,
  );
}

function fetchPolicyText(
  domain: string,
  dns: DnsClient,
  options: { ca?: string[]; timeoutMs?: number },
): Promise<{ ok: true; text: string } | { ok: false; webpki: boolean; detail: string }> {
  return new Promise((resolve) => {
    const request = https.get(
      {
        host: `mta-sts.${domain}`,
        path: '/.well-known/mta-sts.txt',
        lookup: lookupThrough(dns),
        timeout: options.timeoutMs ?? STS_FETCH_TIMEOUT_MS,
        ...(options.ca ? { ca: options.ca } : {}),
        agent: false,
      },
      (response) => {
        // §3.3: no redirects, 200 only, text/plain.
        if (response.statusCode !== 200 || !/^text\/plain\b/i.test(response.headers['content-type'] ?? '')) {
          response.resume();
          return resolve({
            ok: false,
            webpki: false,
            detail: `HTTP ${response.statusCode} ${response.headers['content-type'] ?? ''}`.trim(),
          });
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > STS_MAX_BODY_BYTES) {
            request.destroy();
            resolve({ ok: false, webpki: false, detail: 'policy larger than 64 KB' });
          } else chunks.push(chunk);
        });
        response.on('end', () => resolve({ ok: true, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', (error: NodeJS.ErrnoException) =>
      resolve({
        ok: false,
        webpki: /CERT|SELF_SIGNED|ALTNAME|UNABLE_TO/.test(error.code ?? ''),
        detail: `${error.code ?? ''} ${error.message}`.trim(),
      }),
    );
  });
}

/**
 * No `_mta-sts` record (NXDOMAIN, NODATA) is kept this long, as a resolver keeps a negative answer for
 * its zone's SOA minimum (RFC 2308; 300 s is common). Most destinations publish none: without this,
 * every message asked DNS again (bench:mta: 4,040 TXT queries for 4,000 messages).
 */
const NO_RECORD_TTL_SECONDS = 300;

/** Policies per domain, kept for their max_age, and their TXT records for the TTL; one per MTA thread. */
export class StsPolicyCache {
  private readonly policies = new Map<string, { policy: StsPolicy; id: string; expiresAt: number }>();
  /** TXT answers, each for its own TTL, on the cache's clock. */
  private readonly records: TtlCache<string[]>;
  /** Policy fetches made, for tests and the queue's view. */
  fetches = 0;

  constructor(
    private readonly dns: DnsClient,
    private readonly options: { ca?: string[]; timeoutMs?: number; now?: () => number } = {},
  ) {
    this.records = new TtlCache(MAXIMUM_CACHE_SECONDS * 1000, 10_000, options.now);
  }

  async lookup(domain: string): Promise<StsLookup> {
    const now = this.options.now?.() ?? Date.now();
    const cached = this.policies.get(domain);
    const valid = cached && cached.expiresAt > now ? cached : null;
    const id = stsRecordId(await this.txtRecords(domain));
    if (id === null) {
      // §5.1: a cached policy outlives a missing or unreadable record until its max_age.
      return valid ? { kind: 'policy', policy: valid.policy, id: valid.id } : { kind: 'none' };
    }
    if (valid && valid.id === id) return { kind: 'policy', policy: valid.policy, id };
    this.fetches++;
    const fetched = await fetchPolicyText(domain, this.dns, this.options);
    if (!fetched.ok) {
      if (valid) return { kind: 'policy', policy: valid.policy, id: valid.id };
      return {
        kind: 'failed',
        failure: fetched.webpki ? 'sts-webpki-invalid' : 'sts-policy-fetch-error',
        detail: fetched.detail,
      };
    }
    const policy = parseStsPolicy(fetched.text);
    if (!policy) {
      if (valid) return { kind: 'policy', policy: valid.policy, id: valid.id };
      return { kind: 'failed', failure: 'sts-policy-invalid', detail: 'not an STSv1 policy' };
    }
    this.policies.set(domain, { policy, id, expiresAt: now + policy.maxAgeSeconds * 1000 });
    return { kind: 'policy', policy, id };
  }

  /** The `_mta-sts` TXT records of `domain`, kept for their TTL; none when DNS did not answer (not kept). */
  private async txtRecords(domain: string): Promise<string[]> {
    const kept = this.records.get(domain);
    if (kept) return kept;
    const txt = await this.dns.query(`_mta-sts.${domain}`, 'TXT');
    if (txt.kind !== 'answer' && txt.kind !== 'nodata' && txt.kind !== 'nxdomain') return [];
    const records =
      txt.kind === 'answer'
        ? txt.answers.map((answer) => {
            const data = recordData<Buffer | string | (Buffer | string)[]>(answer);
            return (Array.isArray(data) ? data : [data]).map(String).join('');
          })
        : [];
    const ttlSeconds = txt.kind === 'answer' ? cacheSeconds(minimumTtl(txt.answers, 0)) : NO_RECORD_TTL_SECONDS;
    return this.records.set(domain, records, ttlSeconds * 1000);
  }
}
