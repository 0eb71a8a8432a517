// The authentication verdicts of a routed inbound message, computed by the service and never read from
// the message: SPF of the envelope sender (or the HELO name for a null sender) and the client's IP,
// every DKIM signature, DMARC of the From domain with those two, and the ARC chain, by mailauth with
// its look-ups on DNS_SERVERS (feedback-auth.ts's resolver). Runs in the reader's thread (parse.ts).
// A sender can write `Authentication-Results: <our authserv-id>; spf=pass dkim=pass` into its message;
// an application (or a filter after a forward) reading it would trust a verdict we never gave. So every
// such header is removed before the message is stored or forwarded, and ours is put on top (RFC 8601
// §5: a receiver removes the instances naming itself that it did not add).
import { AUTH_RESULTS, type AuthResult, type InboundAuth } from '../../../shared/schemas/inbound-message.ts';
import { mailauthResolver } from '../inbound-mail/feedback-auth.ts';
import { loadMailauth } from '../inbound-mail/mailauth-load.ts';
import { headerEnd, headerFieldsOf } from '../../mail/header-fields.ts';

export interface SessionFacts {
  /** Our authserv-id: the name in the Authentication-Results we add and the ones we remove. */
  authservId: string;
  dnsServers: string[];
  clientIp: string;
  heloName: string;
  /** MAIL FROM, null for the null sender `<>`. */
  mailFrom: string | null;
}

const RESULTS = new Set<AuthResult>(AUTH_RESULTS);
/** mailauth's words mapped onto RFC 8601's (`neutral` for anything it coins beyond them). */
const asResult = (value: unknown): AuthResult => {
  const word = String(value ?? 'none').toLowerCase();
  return RESULTS.has(word as AuthResult) ? (word as AuthResult) : 'neutral';
};

interface MailauthOutcome {
  spf: { domain?: string; status: { result: string; comment?: string } } | false;
  dkim: {
    results?: Array<{
      signingDomain?: string;
      selector?: string;
      status: { result: string; comment?: string; aligned?: string | false };
    }>;
  };
  dmarc: { domain?: string; policy?: string; status: { result: string } } | false;
  arc: { i?: number | false; status: { result: string }; signature?: { signingDomain?: string } | false } | false;
  headers: string;
}

/**
 * Answers kept this long in the reader's thread: a burst from one sender (a newsletter's replies, a
 * bench) asks the same SPF, DMARC and key records for every message, and the thread reads one message at
 * a time, so each round trip is the listener's wait. Short, so that a record changed (a key rotated, a
 * policy tightened) counts within seconds. Failures (time-outs, SERVFAIL) are not kept; NXDOMAIN and
 * NODATA are, being answers.
 */
const DNS_CACHE_MS = 5_000;
const DNS_CACHE_MAX_ENTRIES = 5_000;
type Lookup = (name: string, rrtype: string) => Promise<unknown>;
const dnsCache = new Map<string, { expires: number; answer: Promise<unknown> }>();
const ANSWERED_EMPTY = new Set(['ENOTFOUND', 'ENODATA']);

function cachedResolver(dnsServers: string[], resolve: Lookup): Lookup {
  const servers = dnsServers.join(',');
  return (name, rrtype) => {
    const key = `${servers} ${rrtype} ${name.toLowerCase()}`;
    const now = Date.now();
    const hit = dnsCache.get(key);
    if (hit && hit.expires > now) return hit.answer;
    if (dnsCache.size >= DNS_CACHE_MAX_ENTRIES) dnsCache.clear();
    const answer = resolve(name, rrtype);
    dnsCache.set(key, { expires: now + DNS_CACHE_MS, answer });
    answer.catch((error: NodeJS.ErrnoException) => {
      if (!ANSWERED_EMPTY.has(error.code ?? '') && dnsCache.get(key)?.answer === answer) dnsCache.delete(key);
    });
    return answer;
  };
}

/** The verdicts and the header lines to put on top of the message (Received-SPF and our Authentication-Results). */
export async function computeVerdicts(
  raw: Buffer,
  facts: SessionFacts,
): Promise<{ auth: InboundAuth; headerLines: string }> {
  const { authenticate } = await loadMailauth();
  let outcome: MailauthOutcome;
  try {
    outcome = (await authenticate(raw, {
      ip: facts.clientIp,
      helo: facts.heloName,
      sender: facts.mailFrom ?? undefined,
      mta: facts.authservId,
      resolver: cachedResolver(facts.dnsServers, mailauthResolver(facts.dnsServers)) as never,
      disableBimi: true,
    })) as unknown as MailauthOutcome;
  } catch (error) {
    // mailauth failing on a message is our failure to judge it, said as such rather than as a verdict.
    const reason = (error as Error).message.replace(/[()\r\n]/g, ' ').slice(0, 200);
    return {
      auth: {
        spf: { result: 'temperror', domain: null, clientIp: facts.clientIp, explanation: reason },
        dkim: { result: 'temperror', signatures: [] },
        dmarc: { result: 'temperror', domain: null, policy: null },
        arc: { result: 'temperror', instance: 0, sealer: null },
      },
      headerLines: `Authentication-Results: ${facts.authservId}; spf=temperror (${reason}); dkim=temperror; dmarc=temperror; arc=temperror\r\n`,
    };
  }
  const signatures = (outcome.dkim.results ?? [])
    .filter((row) => row.signingDomain)
    .map((row) => ({
      domain: row.signingDomain!,
      selector: row.selector ?? '',
      result: asResult(row.status.result),
      aligned: Boolean(row.status.aligned),
      comment: row.status.comment ?? null,
    }));
  const spf = outcome.spf;
  const arc = outcome.arc;
  const dmarc = outcome.dmarc;
  return {
    auth: {
      spf: {
        result: spf ? asResult(spf.status.result) : 'none',
        domain: spf ? (spf.domain ?? null) : null,
        clientIp: facts.clientIp,
        explanation: spf ? (spf.status.comment ?? null) : null,
      },
      dkim: {
        result: signatures.some((s) => s.result === 'pass') ? 'pass' : (signatures[0]?.result ?? 'none'),
        signatures,
      },
      dmarc: dmarc
        ? { result: asResult(dmarc.status.result), domain: dmarc.domain ?? null, policy: dmarc.policy ?? null }
        : { result: 'none', domain: null, policy: null },
      arc: arc
        ? {
            result: asResult(arc.status.result),
            instance: typeof arc.i === 'number' ? arc.i : 0,
            sealer: (arc.signature && arc.signature.signingDomain) || null,
          }
        : { result: 'none', instance: 0, sealer: null },
    },
    headerLines: outcome.headers,
  };
}

/** The authserv-id an Authentication-Results value starts with (RFC 8601 §2.2: CFWS, then a value), lower-cased. */
export function authservIdOf(value: string): string {
  let rest = value;
  // Leading comments and folding whitespace, comments possibly nested.
  for (;;) {
    rest = rest.replace(/^\s+/, '');
    if (!rest.startsWith('(')) break;
    let depth = 0;
    let end = 0;
    for (; end < rest.length; end++) {
      if (rest[end] === '\\') end++;
      else if (rest[end] === '(') depth++;
      else if (rest[end] === ')' && --depth === 0) break;
    }
    rest = rest.slice(end + 1);
  }
  const quoted = /^"((?:[^"\\]|\\.)*)"/.exec(rest);
  const id = quoted ? quoted[1].replace(/\\(.)/g, '$1') : (/^[^\s;()]*/.exec(rest)?.[0] ?? '');
  return id.toLowerCase();
}

/** The top-level header's fields as written and the byte offset of the body (mail/header-fields.ts). */
function headerOf(raw: Buffer): { fields: string[]; bodyStart: number } {
  const bodyStart = headerEnd(raw);
  return { fields: headerFieldsOf(raw.toString('latin1', 0, bodyStart)), bodyStart };
}

/** The value of an Authentication-Results field naming `authservId`, or null for any other field. */
function ourAuthResultsValue(field: string, authservId: string): string | null {
  const match = /^authentication-results[ \t]*:([\s\S]*)$/i.exec(field);
  return match && authservIdOf(match[1]) === authservId.toLowerCase() ? match[1] : null;
}

/**
 * The raw message without the Authentication-Results fields of its header that name `authservId`
 * (whatever their case or comments), and how many were removed. Only the top-level header is read:
 * a message attached inside is left as it was written. Bytes are kept as they are (latin1 round trip).
 */
export function withoutOurAuthResults(raw: Buffer, authservId: string): { raw: Buffer; removed: number } {
  const { fields, bodyStart } = headerOf(raw);
  const kept = fields.filter((field) => ourAuthResultsValue(field, authservId) === null);
  const removed = fields.length - kept.length;
  if (removed === 0) return { raw, removed };
  return { raw: Buffer.concat([Buffer.from(kept.join(''), 'latin1'), raw.subarray(bodyStart)]), removed };
}

/** The value of the first Authentication-Results naming `authservId` (ours, on a stored message), folding kept; null when none. */
export function ourAuthResults(raw: Buffer, authservId: string): string | null {
  for (const field of headerOf(raw).fields) {
    const value = ourAuthResultsValue(field, authservId);
    if (value !== null) return value.replace(/^[ \t]+/, '').replace(/\r?\n$/, '');
  }
  return null;
}
