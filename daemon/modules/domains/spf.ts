// SPF as receivers evaluate it: one record, our mechanism reachable, at most 10 DNS-querying terms
// (RFC 7208 §4.6.4) counted through every include: and redirect=, and a sane `all`.
import { isIPv4 } from 'node:net';
import type { DnsLookup } from './dns-lookup.ts';

export const SPF_LOOKUP_LIMIT = 10;
const MAX_DEPTH = 10;
const QUERYING_TERMS = new Set(['include', 'a', 'mx', 'ptr', 'exists', 'redirect']);

export interface SpfTerm {
  qualifier: '+' | '-' | '~' | '?';
  /** Lower-case mechanism or modifier name: include, a, mx, ip4, all, redirect, exp… */
  name: string;
  /** What follows `:` or `=` (empty for bare a, mx, all). */
  value: string;
  raw: string;
}

export function isSpfRecord(txt: string): boolean {
  return /^v=spf1(\s|$)/i.test(txt.trim());
}

export function parseSpf(record: string): SpfTerm[] {
  return record
    .trim()
    .split(/\s+/)
    .slice(1)
    .filter((raw) => raw !== '')
    .map((raw) => {
      const qualified = /^[+\-~?]/.test(raw);
      const qualifier = (qualified ? raw[0] : '+') as SpfTerm['qualifier'];
      const body = qualified ? raw.slice(1) : raw;
      const match = /^([a-z][a-z0-9._-]*)(?:[:=](.*)|\/.*)?$/i.exec(body);
      const name = (match?.[1] ?? body).toLowerCase();
      const value = match?.[2] ?? '';
      return { qualifier, name, value, raw };
    });
}

function ipv4ToNumber(ip: string): number {
  return ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

function ipv4InRange(ip: string, range: string): boolean {
  const [base, bitsText] = range.split('/');
  if (!isIPv4(base) || !isIPv4(ip)) return false;
  const bits = bitsText === undefined ? 32 : Number(bitsText);
  if (!Number.isInteger(bits) || bits < 0 || bits > 32) return false;
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return (ipv4ToNumber(ip) & mask) >>> 0 === (ipv4ToNumber(base) & mask) >>> 0;
}

/** Does a pass term authorise what `ours` (e.g. `include:_spf.x.net` or `ip4:1.2.3.4`) authorises? */
export function termAuthorises(term: SpfTerm, ours: string): boolean {
  if (term.qualifier !== '+') return false;
  const [oursName, ...rest] = ours.toLowerCase().split(':');
  const oursValue = rest.join(':');
  if (term.name !== oursName) return false;
  const value = term.value.toLowerCase().replace(/\.$/, '');
  if (oursName === 'ip4') return ipv4InRange(oursValue, value);
  return value === oursValue;
}

export interface SpfEvaluation {
  lookups: number;
  authorisesUs: boolean;
  /** include:/redirect= targets without an SPF record. */
  broken: string[];
  /** include:/redirect= targets the resolver could not answer for. */
  unreachable: { name: string; reason: string }[];
}

/** Our mechanisms: one (`include:…`), or one per outbound address separated by spaces (direct delivery). */
export const ourMechanisms = (ours: string): string[] => ours.split(/\s+/).filter((term) => term !== '');

/** Walks include: and redirect= like a receiver would, counting look-ups and looking for our mechanism(s): all must be authorised. */
export async function evaluateSpf(lookup: DnsLookup, record: string, ours: string): Promise<SpfEvaluation> {
  const result: SpfEvaluation = { lookups: 0, authorisesUs: false, broken: [], unreachable: [] };
  const visited = new Set<string>();
  const wanted = ourMechanisms(ours);
  const authorised = new Set<string>();

  async function walk(text: string, depth: number): Promise<void> {
    for (const term of parseSpf(text)) {
      for (const mechanism of wanted) if (termAuthorises(term, mechanism)) authorised.add(mechanism);
      if (!QUERYING_TERMS.has(term.name)) continue;
      result.lookups += 1;
      const follows = term.name === 'include' || term.name === 'redirect';
      // Macros (%{i}…) depend on the message being checked; a receiver still spends the look-up.
      if (!follows || term.value === '' || term.value.includes('%') || depth >= MAX_DEPTH) continue;
      if (result.lookups > SPF_LOOKUP_LIMIT) continue;
      const target = term.value.toLowerCase().replace(/\.$/, '');
      if (visited.has(target)) continue;
      visited.add(target);
      const answer = await lookup.txt(target);
      if (answer.kind === 'timeout' || answer.kind === 'error') {
        result.unreachable.push({ name: target, reason: answer.kind === 'timeout' ? 'timed out' : answer.code });
        continue;
      }
      const nested = answer.kind === 'ok' ? answer.values.filter(isSpfRecord) : [];
      if (nested.length !== 1) {
        result.broken.push(target);
        continue;
      }
      await walk(nested[0], depth + 1);
    }
  }

  await walk(record, 0);
  result.authorisesUs = wanted.length > 0 && wanted.every((mechanism) => authorised.has(mechanism));
  return result;
}

/** One SPF record holding every term of `existing` plus ours, ending in the existing `-all`/`~all` (else `~all`). */
export function mergeSpf(existing: string[], ours: string): string {
  const terms: SpfTerm[] = existing.flatMap(parseSpf);
  const seen = new Set<string>();
  const mechanisms: string[] = [];
  const modifiers: string[] = [];
  let allQualifier: '-' | '~' = '~';
  let hasRedirect = false;
  let hasAll = false;
  for (const term of terms) {
    if (term.name === 'all') {
      hasAll = true;
      if (term.qualifier === '-') allQualifier = '-';
      continue;
    }
    const key = term.raw.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    if (term.name === 'redirect' || term.name === 'exp') {
      if (term.name === 'redirect') hasRedirect = true;
      modifiers.push(term.raw);
    } else {
      mechanisms.push(term.raw);
    }
  }
  for (const mechanism of ourMechanisms(ours))
    if (!terms.some((term) => termAuthorises(term, mechanism))) mechanisms.push(mechanism);
  // A redirect= only applies when there is no `all`; keep it working if that is how the record was built.
  const tail = hasRedirect && !hasAll ? [] : [`${allQualifier}all`];
  return [
    'v=spf1',
    ...mechanisms,
    ...tail,
    ...(hasAll ? modifiers.filter((m) => !/^redirect=/i.test(m)) : modifiers),
  ].join(' ');
}
