// One DNS check of a domain: what each record looks like, what is wrong with it and what to publish.
// Both verification (which stores per-record state) and diagnosis (which stores nothing) use it.
import type {
  DiagnosisCode,
  DiagnosisProblem,
  DnsRecordKind,
  ProblemSeverity,
  PublishRecord,
  RecordStatus,
} from '../../../shared/schemas/domains.ts';
import type { DnsLookup, Lookup } from './dns-lookup.ts';
import { returnPathName } from '../../mail/addresses.ts';
import {
  dkimRecordName,
  expectedRecord,
  expectedRecords,
  toPublish,
  type DomainKeyFacts,
  type ExpectedRecord,
} from './records.ts';
import type { SendingDnsSettings } from './sending-settings.ts';
import { evaluateSpf, isSpfRecord, mergeSpf, parseSpf, SPF_LOOKUP_LIMIT } from './spf.ts';
import { domainAndParents } from '../../mail/domain-names.ts';

export interface RecordInspection {
  status: RecordStatus;
  found: string[];
}

export interface Inspection {
  records: Partial<Record<DnsRecordKind, RecordInspection>>;
  problems: DiagnosisProblem[];
  publish: PublishRecord[];
  expected: ExpectedRecord[];
}

interface Finding {
  status: RecordStatus;
  found: string[];
  problems: DiagnosisProblem[];
  publish: PublishRecord[];
}

function problem(
  record: DiagnosisProblem['record'],
  severity: ProblemSeverity,
  code: DiagnosisCode,
  message: string,
  fix: string,
): DiagnosisProblem {
  return { record, severity, code, message, fix };
}

/** A time-out or resolver failure: reported as a problem of that record, never thrown. */
function resolverTrouble(
  kind: DnsRecordKind,
  name: string,
  answer: Lookup<unknown>,
  required: boolean,
): Finding | null {
  if (answer.kind !== 'timeout' && answer.kind !== 'error') return null;
  const severity: ProblemSeverity = required ? 'error' : 'warning';
  const trouble =
    answer.kind === 'timeout'
      ? problem(
          kind,
          severity,
          'DNS_TIMEOUT',
          `The DNS look-up of ${name} timed out.`,
          "Check that the domain's name servers answer, then run the check again.",
        )
      : problem(
          kind,
          severity,
          'DNS_ERROR',
          `The DNS look-up of ${name} failed (${answer.code}).`,
          "Check the domain's name servers (a SERVFAIL often means broken DNSSEC or a lame delegation), then run the check again.",
        );
  return { status: 'error', found: [], publish: [], problems: [trouble] };
}

function valuesOf(answer: Lookup<string>): string[] {
  return answer.kind === 'ok' ? answer.values : [];
}

async function inspectSpf(
  lookup: DnsLookup,
  answer: Lookup<string>,
  expected: ExpectedRecord,
  settings: SendingDnsSettings,
): Promise<Finding> {
  const trouble = resolverTrouble('spf', expected.name, answer, true);
  if (trouble) return trouble;
  const spf = valuesOf(answer).filter(isSpfRecord);
  if (spf.length === 0) {
    return {
      status: 'missing',
      found: [],
      publish: [toPublish(expected)],
      problems: [
        problem(
          'spf',
          'error',
          'SPF_MISSING',
          `${expected.name} has no SPF record.`,
          `Publish a TXT record at ${expected.name}: ${expected.value}`,
        ),
      ],
    };
  }
  if (spf.length > 1) {
    const merged = mergeSpf(spf, settings.spfMechanism);
    return {
      status: 'mismatch',
      found: spf,
      publish: [toPublish(expected, merged)],
      problems: [
        problem(
          'spf',
          'error',
          'SPF_MULTIPLE',
          `${expected.name} has ${spf.length} SPF records; receivers then fail SPF for every message.`,
          `Replace them with one TXT record: ${merged}`,
        ),
      ],
    };
  }
  const [record] = spf;
  const problems: DiagnosisProblem[] = [];
  const evaluation = await evaluateSpf(lookup, record, settings.spfMechanism);
  let rewrite = false;
  if (!evaluation.authorisesUs) {
    rewrite = true;
    problems.push(
      problem(
        'spf',
        'error',
        'SPF_NOT_INCLUDING_US',
        `The SPF record does not authorise this service (${settings.spfMechanism}).`,
        `Add ${settings.spfMechanism} before the all term: ${mergeSpf([record], settings.spfMechanism)}`,
      ),
    );
  }
  if (evaluation.lookups > SPF_LOOKUP_LIMIT) {
    problems.push(
      problem(
        'spf',
        'error',
        'SPF_TOO_MANY_LOOKUPS',
        `Evaluating the SPF record takes ${evaluation.lookups} DNS look-ups; receivers stop at ${SPF_LOOKUP_LIMIT} and fail SPF.`,
        'Remove include: entries for services you no longer use, or replace them with their ip4:/ip6: ranges.',
      ),
    );
  }
  for (const target of evaluation.broken) {
    problems.push(
      problem(
        'spf',
        'error',
        'SPF_INCLUDE_BROKEN',
        `The SPF record refers to ${target}, which has no single SPF record.`,
        `Remove include:${target} (or redirect=${target}) or fix that domain's SPF record.`,
      ),
    );
  }
  for (const { name, reason } of evaluation.unreachable) {
    problems.push(
      problem(
        'spf',
        'error',
        reason === 'timed out' ? 'DNS_TIMEOUT' : 'DNS_ERROR',
        `The look-up of ${name}, included by the SPF record, ${reason === 'timed out' ? 'timed out' : `failed (${reason})`}.`,
        'Check that the included domain answers, then run the check again.',
      ),
    );
  }
  const all = parseSpf(record).find((term) => term.name === 'all');
  if (all?.qualifier === '+') {
    rewrite = true;
    problems.push(
      problem(
        'spf',
        'error',
        'SPF_PLUS_ALL',
        'The SPF record ends in +all, which lets anyone on the internet send as this domain.',
        'End the record with ~all (or -all once everything that sends for you is listed).',
      ),
    );
  } else if (all?.qualifier === '?') {
    rewrite = true;
    problems.push(
      problem(
        'spf',
        'warning',
        'SPF_NEUTRAL_ALL',
        'The SPF record ends in ?all, which tells receivers nothing about other senders.',
        'End the record with ~all (or -all once everything that sends for you is listed).',
      ),
    );
  }
  const errors = problems.filter((p) => p.severity === 'error');
  const status: RecordStatus = errors.some((p) => p.code === 'DNS_TIMEOUT' || p.code === 'DNS_ERROR')
    ? 'error'
    : errors.length > 0
      ? 'mismatch'
      : 'verified';
  return {
    status,
    found: spf,
    problems,
    publish: rewrite ? [toPublish(expected, mergeSpf([record], settings.spfMechanism))] : [],
  };
}

function dkimTags(record: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of record.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) tags.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).replace(/\s+/g, ''));
  }
  return tags;
}

function inspectDkim(answer: Lookup<string>, expected: ExpectedRecord, domain: DomainKeyFacts): Finding {
  const trouble = resolverTrouble('dkim', expected.name, answer, true);
  if (trouble) return trouble;
  const found = valuesOf(answer);
  const keyRecords = found.filter((txt) => /(^|;)\s*p=/i.test(txt) || /^\s*v=DKIM1/i.test(txt));
  if (keyRecords.length === 0) {
    return {
      status: 'missing',
      found,
      publish: [toPublish(expected)],
      problems: [
        problem(
          'dkim',
          'error',
          'DKIM_MISSING',
          `There is no DKIM key at ${expected.name}.`,
          `Publish a TXT record at ${expected.name}: ${expected.value}`,
        ),
      ],
    };
  }
  const usable = keyRecords
    .map(dkimTags)
    .filter(
      (tags) =>
        (tags.get('v') ?? 'DKIM1').toUpperCase() === 'DKIM1' &&
        (tags.get('k') ?? 'rsa').toLowerCase() === 'rsa' &&
        (tags.get('p') ?? '') !== '',
    );
  if (usable.some((tags) => tags.get('p') === domain.dkimPublicKey))
    return { status: 'verified', found, publish: [], problems: [] };
  if (usable.length === 0) {
    return {
      status: 'mismatch',
      found,
      publish: [toPublish(expected)],
      problems: [
        problem(
          'dkim',
          'error',
          'DKIM_INVALID',
          `The record at ${expected.name} holds no usable RSA key (empty or missing p=, or another version or key type).`,
          `Replace it with: ${expected.value}`,
        ),
      ],
    };
  }
  return {
    status: 'mismatch',
    found,
    publish: [toPublish(expected)],
    problems: [
      problem(
        'dkim',
        'error',
        'DKIM_KEY_MISMATCH',
        `The key at ${expected.name} is not this domain's DKIM key, so signatures will fail.`,
        `Replace the record with: ${expected.value}`,
      ),
    ],
  };
}

function dmarcTags(record: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of record.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) tags.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).trim());
  }
  return tags;
}

const isDmarcRecord = (txt: string) => /^v\s*=\s*DMARC1\s*(;|$)/i.test(txt.trim());

function withPolicy(record: string, policy: string): string {
  const tags = dmarcTags(record);
  tags.delete('v');
  tags.set('p', policy);
  return ['v=DMARC1', `p=${policy}`, ...[...tags].filter(([k]) => k !== 'p').map(([k, v]) => `${k}=${v}`)].join('; ');
}

/** DMARC at `_dmarc.<domain>`, else at a parent's (receivers fall back to the organisational domain). */
async function inspectDmarc(
  lookup: DnsLookup,
  ownAnswer: Lookup<string>,
  expected: ExpectedRecord,
  domainName: string,
): Promise<Finding> {
  const trouble = resolverTrouble('dmarc', expected.name, ownAnswer, false);
  if (trouble) return trouble;
  let records = valuesOf(ownAnswer).filter(isDmarcRecord);
  let where = expected.name;
  for (const parent of domainAndParents(domainName).slice(1)) {
    if (records.length > 0) break;
    const answer = await lookup.txt(`_dmarc.${parent}`);
    records = valuesOf(answer).filter(isDmarcRecord);
    where = `_dmarc.${parent}`;
  }
  if (records.length === 0) {
    return {
      status: 'missing',
      found: [],
      publish: [toPublish(expected)],
      problems: [
        problem(
          'dmarc',
          'warning',
          'DMARC_MISSING',
          `There is no DMARC record at ${expected.name}; large mailbox providers expect one.`,
          `Publish a TXT record at ${expected.name}: ${expected.value}`,
        ),
      ],
    };
  }
  if (records.length > 1) {
    return {
      status: 'mismatch',
      found: records,
      publish: [toPublish(expected, records[0])],
      problems: [
        problem(
          'dmarc',
          'warning',
          'DMARC_MULTIPLE',
          `${where} has ${records.length} DMARC records; receivers then ignore DMARC for the domain.`,
          'Keep exactly one v=DMARC1 record.',
        ),
      ],
    };
  }
  const [record] = records;
  const tags = dmarcTags(record);
  const policy = (tags.get('p') ?? '').toLowerCase();
  const problems: DiagnosisProblem[] = [];
  let status: RecordStatus = 'verified';
  let publish: PublishRecord[] = [];
  if (!['none', 'quarantine', 'reject'].includes(policy)) {
    status = 'mismatch';
    publish = [toPublish(expected, withPolicy(record, 'quarantine'))];
    problems.push(
      problem(
        'dmarc',
        'warning',
        'DMARC_INVALID',
        `The DMARC record at ${where} has no valid p= policy.`,
        `Replace it with: ${withPolicy(record, 'quarantine')}`,
      ),
    );
  } else if (policy === 'none') {
    publish = [toPublish(expected, withPolicy(record, 'quarantine'))];
    problems.push(
      problem(
        'dmarc',
        'warning',
        'DMARC_POLICY_NONE',
        'The DMARC policy is p=none: spoofed mail is only reported, never stopped.',
        `Once reports show your mail passing, move to: ${withPolicy(record, 'quarantine')}`,
      ),
    );
  }
  if (!tags.has('rua')) {
    // The expected record names the service's report address when inbound mail is received (svc domains dmarc).
    const rua = dmarcTags(expected.value).get('rua') ?? `mailto:dmarc-reports@${domainName}`;
    problems.push(
      problem(
        'dmarc',
        'info',
        'DMARC_NO_RUA',
        'The DMARC record has no rua= address, so you receive no aggregate reports.',
        `Add rua=${rua} (or a DMARC report service's address).`,
      ),
    );
  }
  return { status, found: records, problems, publish };
}

function inspectReturnPath(answer: Lookup<string> | Lookup<{ exchange: string }>, expected: ExpectedRecord): Finding {
  const trouble = resolverTrouble('returnPath', expected.name, answer, false);
  if (trouble) return trouble;
  const found = answer.kind === 'ok' ? answer.values.map((v) => (typeof v === 'string' ? v : v.exchange)) : [];
  const target = expected.value.toLowerCase();
  if (found.includes(target)) return { status: 'verified', found, publish: [], problems: [] };
  if (found.length === 0) {
    return {
      status: 'missing',
      found,
      publish: [toPublish(expected)],
      problems: [
        problem(
          'returnPath',
          'warning',
          'RETURN_PATH_MISSING',
          `There is no ${expected.type} record at ${expected.name}; bounces cannot use your domain and SPF alignment falls back to ours.`,
          `Publish a ${expected.type} record at ${expected.name} pointing to ${expected.value}.`,
        ),
      ],
    };
  }
  return {
    status: 'mismatch',
    found,
    publish: [toPublish(expected)],
    problems: [
      problem(
        'returnPath',
        'warning',
        'RETURN_PATH_MISMATCH',
        `${expected.name} points to ${found.join(', ')} instead of ${expected.value}.`,
        `Change the ${expected.type} record at ${expected.name} to ${expected.value}.`,
      ),
    ],
  };
}

export async function inspectDomain(
  lookup: DnsLookup,
  domain: DomainKeyFacts,
  settings: SendingDnsSettings,
): Promise<Inspection> {
  const expected = expectedRecords(domain, settings);
  const spfExpected = expectedRecord(expected, 'spf')!;
  const dkimExpected = expectedRecord(expected, 'dkim')!;
  const dmarcExpected = expectedRecord(expected, 'dmarc')!;
  const returnPathExpected = expectedRecord(expected, 'returnPath');

  const [spfAnswer, dkimAnswer, dmarcAnswer, returnPathAnswer] = await Promise.all([
    lookup.txt(domain.name),
    lookup.txt(dkimRecordName(domain)),
    lookup.txt(dmarcExpected.name),
    returnPathExpected === undefined
      ? Promise.resolve(null)
      : returnPathExpected.type === 'MX'
        ? lookup.mx(returnPathName(domain.name))
        : lookup.cname(returnPathName(domain.name)),
  ]);

  if (spfAnswer.kind === 'nxdomain') {
    const records: Inspection['records'] = {};
    for (const record of expected) records[record.record] = { status: 'missing', found: [] };
    return {
      expected,
      records,
      publish: expected.map((record) => toPublish(record)),
      problems: [
        problem(
          'domain',
          'error',
          'DOMAIN_NXDOMAIN',
          `${domain.name} does not exist in DNS (NXDOMAIN).`,
          'Register the domain or create its DNS zone, then publish the records listed in publish.',
        ),
      ],
    };
  }

  const findings: [DnsRecordKind, Finding][] = [
    ['spf', await inspectSpf(lookup, spfAnswer, spfExpected, settings)],
    ['dkim', inspectDkim(dkimAnswer, dkimExpected, domain)],
    ['dmarc', await inspectDmarc(lookup, dmarcAnswer, dmarcExpected, domain.name)],
  ];
  if (returnPathExpected && returnPathAnswer)
    findings.push(['returnPath', inspectReturnPath(returnPathAnswer, returnPathExpected)]);

  const records: Inspection['records'] = {};
  for (const [kind, finding] of findings) records[kind] = { status: finding.status, found: finding.found };
  return {
    expected,
    records,
    problems: findings.flatMap(([, finding]) => finding.problems),
    publish: findings.flatMap(([, finding]) => finding.publish),
  };
}

/** Verified means receivers will pass SPF and DKIM for mail we send as the domain. */
export function passesVerification(inspection: Inspection): boolean {
  return inspection.records.spf?.status === 'verified' && inspection.records.dkim?.status === 'verified';
}

/** Only resolver failures stand between the domain and its previous verdict (so one flaky answer changes nothing). */
export function onlyResolverTrouble(inspection: Inspection): boolean {
  const failing = (['spf', 'dkim'] as const).filter((kind) => inspection.records[kind]?.status !== 'verified');
  return failing.length > 0 && failing.every((kind) => inspection.records[kind]?.status === 'error');
}
