// Sending domains: the records a tenant publishes, their state after a DNS check, and the diagnosis.
import { Type, type Static } from '@sinclair/typebox';
import { Timestamp, Uuid, Nullable, OneOf } from './common.ts';

export const CreateDomainDto = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 253,
      description:
        'The domain mail is sent from, e.g. example.com or mail.example.com. Unicode names are stored as punycode.',
    }),
  },
  { additionalProperties: false },
);
export type CreateDomainDto = Static<typeof CreateDomainDto>;

export const DOMAIN_STATUSES = ['pending', 'verified', 'failed'] as const;
export type DomainStatus = (typeof DOMAIN_STATUSES)[number];
export const DomainStatusSchema = OneOf(DOMAIN_STATUSES, {
  description:
    'pending: never verified; verified: SPF and DKIM pass; failed: the last check found them missing or wrong',
});

export const DNS_RECORD_KINDS = ['spf', 'dkim', 'dmarc', 'returnPath'] as const;
export type DnsRecordKind = (typeof DNS_RECORD_KINDS)[number];

/** State of one record after the last check. `error` means the resolver failed (time-out, SERVFAIL…). */
export const RECORD_STATUSES = ['pending', 'verified', 'missing', 'mismatch', 'error'] as const;
export type RecordStatus = (typeof RECORD_STATUSES)[number];

export const DnsRecord = Type.Object({
  record: OneOf(DNS_RECORD_KINDS),
  type: Type.Union([Type.Literal('TXT'), Type.Literal('CNAME'), Type.Literal('MX')]),
  /** Fully qualified name to create the record at. */
  name: Type.String(),
  value: Type.String(),
  priority: Type.Optional(Type.Integer({ description: 'MX preference (MX records only)' })),
  /** SPF and DKIM are needed for verification; DMARC and the return path are recommended. */
  required: Type.Boolean(),
  status: OneOf(RECORD_STATUSES),
  note: Type.Optional(
    Type.String({ description: 'what to know before publishing it, e.g. that the SPF names a private address' }),
  ),
  /** What DNS answered at `name` on the last check (TXT strings already joined). */
  found: Type.Array(Type.String()),
  checkedAt: Nullable(Timestamp),
});
export type DnsRecord = Static<typeof DnsRecord>;

export const DomainBody = Type.Object({
  id: Uuid,
  name: Type.String({ description: 'ASCII (punycode) form' }),
  unicodeName: Type.String({ description: 'the name as people read it' }),
  status: DomainStatusSchema,
  dkimSelector: Type.String(),
  verifiedAt: Nullable(Timestamp),
  lastCheckedAt: Nullable(Timestamp),
  /** Set when a daily re-check found a record that changed since the previous check. */
  driftDetectedAt: Nullable(Timestamp),
  drift: Type.Array(Type.Object({ record: Type.String(), from: Type.String(), to: Type.String() }), {
    description: 'records whose state changed at driftDetectedAt',
  }),
  records: Type.Array(DnsRecord),
  createdAt: Timestamp,
});
export type DomainBody = Static<typeof DomainBody>;

/**
 * Every problem `GET /domains/{id}/diagnose` can report.
 * - DOMAIN_NXDOMAIN: the domain does not exist in DNS (error)
 * - SPF_MISSING: no `v=spf1` TXT record at the domain (error)
 * - SPF_MULTIPLE: more than one `v=spf1` record; receivers treat that as a permanent error (error)
 * - SPF_NOT_INCLUDING_US: the SPF record does not authorise this service (error)
 * - SPF_TOO_MANY_LOOKUPS: evaluating the record takes more than 10 DNS look-ups (include, a, mx, ptr, exists, redirect; followed recursively) (error)
 * - SPF_INCLUDE_BROKEN: an include:/redirect= target has no SPF record (error)
 * - SPF_PLUS_ALL: `+all` (or bare `all`) lets anyone send as the domain (error)
 * - SPF_NEUTRAL_ALL: `?all` gives receivers no policy (warning)
 * - DKIM_MISSING: no TXT record at `<selector>._domainkey.<domain>` (error)
 * - DKIM_INVALID: a record is there but has no usable `p=` key (error)
 * - DKIM_KEY_MISMATCH: the published key is not this domain's key (error)
 * - DMARC_MISSING: no `v=DMARC1` record at `_dmarc.<domain>` (warning)
 * - DMARC_MULTIPLE: more than one DMARC record; receivers ignore both (warning)
 * - DMARC_INVALID: the DMARC record has no valid `p=` policy (warning)
 * - DMARC_POLICY_NONE: `p=none` only monitors (warning)
 * - DMARC_NO_RUA: no `rua=` address, so no aggregate reports arrive (info)
 * - RETURN_PATH_MISSING: the bounce (return-path) record is absent (warning)
 * - RETURN_PATH_MISMATCH: the bounce record points somewhere else (warning)
 * - DNS_TIMEOUT: the resolver did not answer in time for this record (error)
 * - DNS_ERROR: the resolver failed for this record (SERVFAIL, REFUSED…) (error)
 * - INBOUND_MX_MISSING: the domain is also an inbound domain of the tenant and has no MX record (error)
 * - INBOUND_MX_ELSEWHERE: an inbound domain whose MX names other hosts, not the service's inbound host (error)
 * - INBOUND_MX_SPLIT: an inbound domain with other MX hosts beside ours: mail would split between them
 *   (warning while ours is the most preferred, else error)
 */
export const DIAGNOSIS_CODES = [
  'DOMAIN_NXDOMAIN',
  'SPF_MISSING',
  'SPF_MULTIPLE',
  'SPF_NOT_INCLUDING_US',
  'SPF_TOO_MANY_LOOKUPS',
  'SPF_INCLUDE_BROKEN',
  'SPF_PLUS_ALL',
  'SPF_NEUTRAL_ALL',
  'DKIM_MISSING',
  'DKIM_INVALID',
  'DKIM_KEY_MISMATCH',
  'DMARC_MISSING',
  'DMARC_MULTIPLE',
  'DMARC_INVALID',
  'DMARC_POLICY_NONE',
  'DMARC_NO_RUA',
  'RETURN_PATH_MISSING',
  'RETURN_PATH_MISMATCH',
  'DNS_TIMEOUT',
  'DNS_ERROR',
  'INBOUND_MX_MISSING',
  'INBOUND_MX_ELSEWHERE',
  'INBOUND_MX_SPLIT',
] as const;
export type DiagnosisCode = (typeof DIAGNOSIS_CODES)[number];

export const PROBLEM_SEVERITIES = ['error', 'warning', 'info'] as const;
export type ProblemSeverity = (typeof PROBLEM_SEVERITIES)[number];

export const DiagnosisProblem = Type.Object({
  record: OneOf([...DNS_RECORD_KINDS, 'domain', 'inboundMx'] as const),
  severity: OneOf(PROBLEM_SEVERITIES),
  code: OneOf(DIAGNOSIS_CODES),
  message: Type.String(),
  fix: Type.String(),
});
export type DiagnosisProblem = Static<typeof DiagnosisProblem>;

export const PublishRecord = Type.Object({
  record: OneOf(DNS_RECORD_KINDS),
  type: Type.Union([Type.Literal('TXT'), Type.Literal('CNAME'), Type.Literal('MX')]),
  name: Type.String(),
  value: Type.String(),
  priority: Type.Optional(Type.Integer()),
});
export type PublishRecord = Static<typeof PublishRecord>;

export const SENDER_RULES = ['dkimAligned', 'dmarcRecord'] as const;
export type SenderRuleName = (typeof SENDER_RULES)[number];

/** One of the mailbox providers' sender rules (Gmail, Yahoo, Outlook.com), as the last DNS look-up found it. */
export const SenderRuleCheck = Type.Object({
  rule: OneOf(SENDER_RULES, {
    description:
      'dkimAligned: mail is DKIM-signed with d= this domain (relaxed alignment); dmarcRecord: a DMARC record covers it',
  }),
  /** unknown: the DNS look-up failed, so the rule could not be judged (sends are not refused for it). */
  status: OneOf(['pass', 'fail', 'unknown'] as const),
  message: Type.String(),
  /** What to publish or change; null when the rule passes. */
  fix: Nullable(Type.String()),
});
export type SenderRuleCheck = Static<typeof SenderRuleCheck>;

export const SenderRulesReport = Type.Object({
  /** True when this daemon delivers directly (DELIVERY=direct) and so refuses sends that break a rule. */
  enforced: Type.Boolean(),
  rules: Type.Array(SenderRuleCheck),
});
export type SenderRulesReport = Static<typeof SenderRulesReport>;

export const DiagnosisBody = Type.Object({
  domain: Type.String(),
  /** True when no problem has severity `error`. */
  ok: Type.Boolean(),
  problems: Type.Array(DiagnosisProblem),
  /** Records to create or replace so that every error and warning goes away (SPF merged with what is there). */
  publish: Type.Array(PublishRecord),
  /** The providers' sender rules, each with its fix (docs/mta.md "Sender rules and deliverability"). */
  senderRules: SenderRulesReport,
  checkedAt: Timestamp,
});
export type DiagnosisBody = Static<typeof DiagnosisBody>;

export const VerifyDomainBody = Type.Composite([DomainBody, Type.Object({ problems: Type.Array(DiagnosisProblem) })]);
export type VerifyDomainBody = Static<typeof VerifyDomainBody>;
