// The bulk-sender rules of the large mailbox providers (Gmail and Yahoo since February 2024, Microsoft
// Outlook.com since May 2025), enforced when a tenant's mail leaves by direct delivery: the From
// domain has a DKIM signature that aligns with it (relaxed: d= is the From domain or a parent) and a
// DMARC record (p=none is enough). Mail that breaks them is refused or junked by those providers and
// costs the sending IPs' reputation for every tenant, so it is refused at accept with the fix instead.
//
// DKIM alignment is known without DNS: the send path signs with the key of the tenant's verified domain
// that covers the sender (signing.ts), and a domain is verified only when its DKIM key is published
// (inspect.ts passesVerification). DMARC is looked up through DNS_SERVERS, `_dmarc.<domain>` then each
// parent (receivers fall back to the organisational domain), and kept by the answer's TTL. A look-up
// that times out or fails does not refuse the send (fail-open, logged): a resolver hiccup must not
// stop a tenant's password resets, and the receiver checks DMARC itself anyway.
import type { Sequelize } from 'sequelize';
import type { Config } from '../../config.ts';
import { ApiError } from '../../errors.ts';
import type { DiagnosisProblem, SenderRuleCheck, SenderRulesReport } from '../../../shared/schemas/domains.ts';
import type { Inspection } from './inspect.ts';
import { dmarcValue } from './records.ts';
import { loadSendingDnsSettings, type SendingDnsSettings } from './sending-settings.ts';
import type { DkimKeys, DmarcAnswers, DmarcLookup } from '../../mail/resources.ts';
import { createDnsClient, minimumTtl, recordData, type DnsClient } from '../../mta/dns-query.ts';
import { domainAndParents } from '../../mail/domain-names.ts';

/** A DMARC look-up waits this long per name: the send waits on it when the cache misses. */
export const DMARC_LOOKUP_TIMEOUT_MS = 2_000;
/** A found record is kept for its TTL, at most this long… */
export const DMARC_FOUND_MAX_CACHE_MS = 10 * 60_000;
/** …a missing or unusable one this long, so a record just published counts within a minute… */
export const DMARC_MISSING_CACHE_MS = 60_000;
/** …and a look-up that failed this long, so a silent resolver does not slow every send. */
export const DMARC_TROUBLE_CACHE_MS = 30_000;
const CACHE_MAX_ENTRIES = 5_000;

const isDmarcRecord = (txt: string) => /^v\s*=\s*DMARC1\s*(;|$)/i.test(txt.trim());

function policyOf(record: string): string | null {
  for (const part of record.split(';')) {
    const [key, value] = part.split('=').map((s) => s.trim().toLowerCase());
    if (key === 'p') return value ?? null;
  }
  return null;
}

/** What the DMARC records at one name are worth to a receiver (RFC 7489 §6.6.3: several = none). */
export function judgeDmarcRecords(name: string, txt: string[]): DmarcLookup | null {
  const records = txt.filter(isDmarcRecord);
  if (records.length === 0) return null;
  if (records.length > 1)
    return { kind: 'unusable', name, records, reason: `${name} has ${records.length} DMARC records` };
  const policy = policyOf(records[0]);
  if (policy !== 'none' && policy !== 'quarantine' && policy !== 'reject')
    return { kind: 'unusable', name, records, reason: `the DMARC record at ${name} has no valid p= policy` };
  return { kind: 'found', name, record: records[0] };
}

export interface SenderRulesOptions {
  /** DNS_SERVERS entries; empty uses the system's resolvers. */
  dnsServers: string[];
  timeoutMs?: number;
  /** Told when a look-up fails, once per look-up; the sends are let through (fail-open). */
  onLookupTrouble?: (details: { domain: string; name: string; reason: string }) => void;
}

/** Per app or worker thread (modules/mail-resources.ts): the DMARC answers of sender domains, kept by TTL. */
export class SenderRules implements DmarcAnswers {
  private readonly dns: DnsClient;
  // Promises are kept, so the sends that miss together share one look-up.
  private readonly kept = new Map<string, { answer: Promise<TimedLookup>; expiresAt: number }>();

  constructor(private readonly options: SenderRulesOptions) {
    this.dns = createDnsClient({
      servers: options.dnsServers,
      timeoutMs: options.timeoutMs ?? DMARC_LOOKUP_TIMEOUT_MS,
    });
  }

  /** The DMARC record that covers `domain` (itself, else the closest parent that has one). */
  async dmarc(domain: string): Promise<DmarcLookup> {
    const key = domain.toLowerCase();
    let entry = this.kept.get(key);
    if (!entry || entry.expiresAt <= Date.now()) {
      if (this.kept.size >= CACHE_MAX_ENTRIES) this.kept.clear();
      const fresh = { answer: this.lookUp(key), expiresAt: Date.now() + DMARC_TROUBLE_CACHE_MS };
      this.kept.set(key, fresh);
      void fresh.answer.then(({ lookup, ttlMs }) => {
        fresh.expiresAt = Date.now() + ttlMs;
        // Once per look-up, not per send: the sends of the next 30 s go on the same unknown answer.
        if (lookup.kind === 'unknown')
          this.options.onLookupTrouble?.({ domain: key, name: lookup.name, reason: lookup.reason });
      });
      entry = fresh;
    }
    return (await entry.answer).lookup;
  }

  /** Forgets what is kept for `domain` and its subdomains (a diagnosis just looked again). */
  forget(domain: string): void {
    const name = domain.toLowerCase();
    for (const key of this.kept.keys()) if (key === name || key.endsWith(`.${name}`)) this.kept.delete(key);
  }

  /** Never throws: a failed question is an `unknown` answer. */
  private async lookUp(domain: string): Promise<TimedLookup> {
    for (const parent of domainAndParents(domain)) {
      const name = `_dmarc.${parent}`;
      const reply = await this.dns.query(name, 'TXT').catch((error: unknown) => ({
        kind: 'error' as const,
        code: (error as { code?: string }).code ?? String(error),
      }));
      if (reply.kind === 'timeout' || reply.kind === 'error') {
        const reason = reply.kind === 'timeout' ? 'timed out' : `failed (${reply.code})`;
        return { lookup: { kind: 'unknown', name, reason }, ttlMs: DMARC_TROUBLE_CACHE_MS };
      }
      if (reply.kind !== 'answer') continue;
      const txt = reply.answers.map((answer) => {
        const data = recordData<Buffer | string | (Buffer | string)[]>(answer);
        return (Array.isArray(data) ? data : [data]).map(String).join('');
      });
      const judged = judgeDmarcRecords(name, txt);
      if (!judged) continue;
      if (judged.kind !== 'found') return { lookup: judged, ttlMs: DMARC_MISSING_CACHE_MS };
      const ttlMs = Math.min(minimumTtl(reply.answers, 300) * 1000, DMARC_FOUND_MAX_CACHE_MS);
      return { lookup: judged, ttlMs: Math.max(ttlMs, 1_000) };
    }
    return { lookup: { kind: 'missing' }, ttlMs: DMARC_MISSING_CACHE_MS };
  }
}

interface TimedLookup {
  lookup: DmarcLookup;
  ttlMs: number;
}

/** The error code of a send refused for the providers' sender rules (CONTRACT.md error body). */
export const SENDER_RULES_CODE = 'SENDER_RULES_NOT_MET';

export interface SenderRulesDeps {
  db: { sequelize: Sequelize };
  config: Pick<Config, 'publicUrl' | 'smtpInboundPort'>;
  dkimSigning: Pick<DkimKeys, 'verifiedDomain'>;
  senderRules: Pick<DmarcAnswers, 'dmarc'>;
}

/**
 * Refuses (403 SENDER_RULES_NOT_MET) mail from `fromDomain` that would leave without a DMARC record
 * covering it; the message names the record to publish. A domain with no verified domain covering it
 * is left to the caller's DOMAIN_NOT_VERIFIED refusal: verifying is what makes DKIM align, and that
 * refusal already says how. An `unknown` DMARC answer lets the send through (logged by SenderRules).
 */
export async function enforceSenderRules(deps: SenderRulesDeps, tenantId: string, fromDomain: string): Promise<void> {
  const verified = await deps.dkimSigning.verifiedDomain(tenantId, fromDomain);
  if (!verified) return;
  const dmarc = await deps.senderRules.dmarc(fromDomain);
  if (dmarc.kind === 'found' || dmarc.kind === 'unknown') return;
  const fix = await dmarcFix(deps, verified.name);
  const broken =
    dmarc.kind === 'missing'
      ? `${fromDomain} has no DMARC record (looked up _dmarc.${fromDomain} and its parents)`
      : `${fromDomain} has no usable DMARC record: ${dmarc.reason}, which receivers ignore`;
  throw new ApiError(
    403,
    SENDER_RULES_CODE,
    `${broken}; Gmail, Yahoo and Outlook.com refuse or junk mail without one, so direct delivery does not send it. ${fix.sentence} (GET /domains/${verified.id}/diagnose shows every rule).`,
    [{ field: 'from', message: `DMARC: ${broken}. ${fix.sentence}` }],
  );
}

/** The record to publish: p=none is enough for the rule; the diagnosis suggests the stricter one. */
async function dmarcFix(deps: SenderRulesDeps, domainName: string): Promise<{ sentence: string }> {
  const settings = await loadSendingDnsSettings(deps.db.sequelize, deps.config);
  return { sentence: `Publish a TXT record at _dmarc.${domainName}: ${minimalDmarcValue(domainName, settings)}` };
}

/** The least a domain must publish to pass the rule, reporting to the platform's DMARC mailbox when it has one. */
export function minimalDmarcValue(domainName: string, settings: SendingDnsSettings): string {
  return dmarcValue(domainName, settings).replace(/p=quarantine/, 'p=none');
}

const DMARC_RULE_CODES = new Set(['DMARC_MISSING', 'DMARC_MULTIPLE', 'DMARC_INVALID']);

/**
 * The diagnosis's view of the rules, from one inspection of the domain (its own DKIM key: d= is the
 * domain, so a published key is an aligned signature). When the rules are enforced, the DMARC problems
 * that break them become errors: the diagnosis is then not ok, as sends are refused.
 */
export function senderRulesOfInspection(
  inspection: Pick<Inspection, 'records' | 'problems'>,
  domainName: string,
  settings: SendingDnsSettings,
  enforced: boolean,
): { report: SenderRulesReport; problems: DiagnosisProblem[] } {
  const statusOf = (status: string | undefined): SenderRuleCheck['status'] =>
    status === 'verified' ? 'pass' : status === 'error' || status === undefined ? 'unknown' : 'fail';
  const firstProblem = (record: 'dkim' | 'dmarc') => inspection.problems.find((p) => p.record === record);
  const dkim = statusOf(inspection.records.dkim?.status);
  const dmarc = statusOf(inspection.records.dmarc?.status);
  const dmarcFixValue = `Publish a TXT record at _dmarc.${domainName}: ${minimalDmarcValue(domainName, settings)}`;
  const rules: SenderRuleCheck[] = [
    {
      rule: 'dkimAligned',
      status: dkim,
      message:
        dkim === 'pass'
          ? `Mail from ${domainName} and its subdomains is DKIM-signed with d=${domainName}, which aligns with the From domain.`
          : (firstProblem('dkim')?.message ?? `The DKIM key of ${domainName} could not be checked.`),
      fix: dkim === 'pass' ? null : (firstProblem('dkim')?.fix ?? 'Run the check again.'),
    },
    {
      rule: 'dmarcRecord',
      status: dmarc,
      message:
        dmarc === 'pass'
          ? `A DMARC record covers ${domainName}.`
          : (firstProblem('dmarc')?.message ?? `The DMARC record of ${domainName} could not be checked.`),
      fix: dmarc === 'pass' ? null : dmarc === 'unknown' ? (firstProblem('dmarc')?.fix ?? null) : dmarcFixValue,
    },
  ];
  const problems = inspection.problems.map((problem) =>
    enforced && DMARC_RULE_CODES.has(problem.code)
      ? {
          ...problem,
          severity: 'error' as const,
          message: `${problem.message} Direct delivery refuses mail from this domain until it has one usable DMARC record.`,
        }
      : problem,
  );
  return { report: { enforced, rules }, problems };
}
