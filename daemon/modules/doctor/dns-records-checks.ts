// The records receivers read before they trust direct delivery: SPF of every sending domain and of
// the platform's own domain naming the outbound addresses, and the platform domain's DMARC, MTA-STS
// and TLS-RPT. Through DNS_SERVERS, as the MTA resolves.
import { isIPv4 } from 'node:net';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { Config } from '../../config.ts';
import { systemMailDomain } from '../../mail/addresses.ts';
import { isFullyQualifiedName } from '../../ehlo-name.ts';
import { createDnsLookup, type DnsLookup } from '../domains/dns-lookup.ts';
import { evaluateSpf, isSpfRecord, mergeSpf } from '../domains/spf.ts';
import type { DoctorCheck } from '../../../shared/schemas/doctor.ts';

/** Sending domains checked at most (a platform with thousands of tenants would wait minutes). */
export const SPF_DOMAINS_CHECKED = 20;

export const spfMechanismOf = (ip: string) => `${isIPv4(ip) ? 'ip4' : 'ip6'}:${ip}`;

async function verifiedDomains(sequelize: Sequelize): Promise<{ names: string[]; total: number }> {
  const rows = await sequelize.query<{ name: string; total: string }>(
    `SELECT name, count(*) OVER () AS total FROM (SELECT DISTINCT lower(name) AS name FROM domains WHERE status = 'verified') d
     ORDER BY name LIMIT :limit`,
    { replacements: { limit: SPF_DOMAINS_CHECKED }, type: QueryTypes.SELECT },
  );
  return { names: rows.map((row) => row.name), total: Number(rows[0]?.total ?? 0) };
}

/** What is wrong with one domain's SPF for these addresses, or null when it authorises them all. */
async function spfProblem(lookup: DnsLookup, domain: string, addresses: string[]): Promise<string | null> {
  const answer = await lookup.txt(domain);
  if (answer.kind === 'timeout' || answer.kind === 'error')
    return `${domain}: the TXT look-up failed (${answer.kind === 'timeout' ? 'timeout' : answer.code})`;
  const records = answer.kind === 'ok' ? answer.values.filter(isSpfRecord) : [];
  const wanted = addresses.map(spfMechanismOf);
  if (records.length === 0) return `${domain} has no SPF record (publish v=spf1 ${wanted.join(' ')} ~all)`;
  if (records.length > 1) return `${domain} has ${records.length} SPF records (receivers fail SPF for all of them)`;
  const missing: string[] = [];
  for (const mechanism of wanted)
    if (!(await evaluateSpf(lookup, records[0], mechanism)).authorisesUs) missing.push(mechanism);
  if (missing.length === 0) return null;
  return `${domain}'s SPF does not authorise ${missing.join(', ')} (publish ${missing.reduce((record, term) => mergeSpf([record], term), records[0])})`;
}

export async function checkSpf(
  deps: { sequelize: Sequelize; config: Config },
  lookup: DnsLookup,
  addresses: string[],
): Promise<DoctorCheck> {
  if (addresses.length === 0)
    return {
      name: 'spf',
      ok: false,
      message: 'Not checked: the outbound address is not known (port 25 did not open and OUTBOUND_ADDRESS is not set).',
      fix: 'Set OUTBOUND_ADDRESS to the public address mail leaves from, or fix port 25 first.',
    };
  const platform = systemMailDomain(deps.config);
  const { names, total } = await verifiedDomains(deps.sequelize);
  const domains = [...new Set([...(isFullyQualifiedName(platform) ? [platform] : []), ...names])];
  if (domains.length === 0)
    return {
      name: 'spf',
      ok: true,
      message: 'No verified sending domain yet and no platform domain (PUBLIC_URL is an address): no SPF to check.',
      fix: `When you add a domain, its SPF must name ${addresses.map(spfMechanismOf).join(' ')}.`,
    };
  const problems = (await Promise.all(domains.map((domain) => spfProblem(lookup, domain, addresses)))).filter(
    (problem): problem is string => problem !== null,
  );
  const more = total > names.length ? ` (the first ${names.length} of ${total} verified domains)` : '';
  if (problems.length > 0)
    return {
      name: 'spf',
      ok: false,
      message: `SPF of ${problems.length} of ${domains.length} domain(s)${more} does not name the outbound address(es) ${addresses.join(', ')}: ${problems.join('; ')}.`,
      fix: 'Publish the SPF record shown for each domain (svc domains diagnose <domain> shows the full record); receivers then fail SPF and DMARC for mail from this host.',
    };
  return {
    name: 'spf',
    ok: true,
    message: `SPF of ${domains.join(', ')}${more} authorises ${addresses.join(', ')}.`,
  };
}

interface PolicyRecord {
  name: string;
  label: string;
  prefix: RegExp;
  why: string;
  example: (domain: string) => string;
}

const PLATFORM_RECORDS: PolicyRecord[] = [
  {
    name: 'dmarc',
    label: '_dmarc',
    prefix: /^v=DMARC1(;|\s|$)/i,
    why: 'Gmail and Yahoo require DMARC from bulk senders; without it system mail is refused or marked',
    example: (domain) => `v=DMARC1; p=quarantine; rua=mailto:dmarc-reports@${domain}`,
  },
  {
    name: 'mta-sts',
    label: '_mta-sts',
    prefix: /^v=STSv1(;|\s|$)/i,
    why: 'without MTA-STS, mail to the platform domain can be downgraded to plain text by anyone on the path',
    example: () =>
      `v=STSv1; id=${new Date().toISOString().slice(0, 10).replaceAll('-', '')} (and serve https://mta-sts.<domain>/.well-known/mta-sts.txt)`,
  },
  {
    name: 'tls-rpt',
    label: '_smtp._tls',
    prefix: /^v=TLSRPTv1(;|\s|$)/i,
    why: 'without TLS-RPT, receivers cannot tell you when TLS to your MX fails',
    example: (domain) => `v=TLSRPTv1; rua=mailto:tls-reports@${domain}`,
  },
];

/** DMARC, MTA-STS and TLS-RPT of the platform's own domain, one line each. */
export async function checkPlatformRecords(config: Config, lookup: DnsLookup): Promise<DoctorCheck[]> {
  const domain = systemMailDomain(config);
  if (!isFullyQualifiedName(domain))
    return PLATFORM_RECORDS.map((record) => ({
      name: record.name,
      ok: false,
      message: `Not checked: the platform has no domain of its own (PUBLIC_URL ${config.publicUrl} names no domain).`,
      fix: 'Set PUBLIC_URL to the platform’s public name (e.g. https://mail.example.com) and publish its records.',
    }));
  return Promise.all(
    PLATFORM_RECORDS.map(async (record): Promise<DoctorCheck> => {
      const name = `${record.label}.${domain}`;
      const answer = await lookup.txt(name);
      if (answer.kind === 'timeout' || answer.kind === 'error')
        return {
          name: record.name,
          ok: false,
          message: `The TXT look-up of ${name} failed (${answer.kind === 'timeout' ? 'timeout' : answer.code}).`,
          fix: 'Fix the resolver first.',
        };
      const found = answer.kind === 'ok' ? answer.values.find((value) => record.prefix.test(value.trim())) : undefined;
      if (!found)
        return {
          name: record.name,
          ok: false,
          message: `${name} has no ${record.name.toUpperCase()} record: ${record.why}.`,
          fix: `Publish TXT ${name} "${record.example(domain)}".`,
        };
      return { name: record.name, ok: true, message: `${name}: ${found}` };
    }),
  );
}

export function recordsLookup(config: Pick<Config, 'dnsServers'>): DnsLookup {
  return createDnsLookup({ servers: config.dnsServers });
}
