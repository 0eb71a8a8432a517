// Sending domains of a tenant: register (with a new DKIM key), list, check DNS, diagnose, delete,
// and the questions the send pipeline asks (is this sender verified? which return path?).
import { UniqueConstraintError } from 'sequelize';
import type { Config } from '../../config.ts';
import type { TenantContext } from '../../context.ts';
import type { Database } from '../../db/index.ts';
import type { Secrets } from '../../secrets.ts';
import { ConflictError, NotFoundError } from '../../errors.ts';
import type { DiagnosisBody, DnsRecord, DomainBody, VerifyDomainBody } from '../../../shared/schemas/domains.ts';
import type { Domain, DriftEntry, RecordChecks } from './model.ts';
import { modelsOf } from '../models.ts';
import { generateDkimKey } from './keys.ts';
import { normalizeDomainName, unicodeDomainName } from '../../mail/domain-names.ts';
import { createDnsLookup } from './dns-lookup.ts';
import { inspectDomain, onlyResolverTrouble, passesVerification, type Inspection } from './inspect.ts';
import { expectedRecords } from './records.ts';
import { loadSendingDnsSettings, type SendingDnsSettings } from './sending-settings.ts';
import { senderRulesOfInspection } from './sender-rules.ts';
import type { DkimKeys, DmarcAnswers } from '../../mail/resources.ts';
import { findPage } from '../../db/paging.ts';
import { inboundMxProblems } from '../inbound-routing/domains.ts';

export interface DomainDeps {
  db: Pick<Database, 'sequelize'>;
  secrets: Pick<Secrets, 'encryptionKey'>;
  config: Pick<Config, 'publicUrl' | 'dnsServers' | 'smtpInboundPort' | 'inboundMxHost'> &
    Partial<Pick<Config, 'delivery'>>;
  /** Per-query DNS time-out (tests shorten it). */
  dnsTimeoutMs?: number;
  /** Told when a tenant's domains change, so this app or thread signs with the new state at once. */
  dkimSigning: Pick<DkimKeys, 'forget'>;
  /** The send path's DMARC answers: a diagnosis forgets the domain's, so a record just published counts. */
  senderRules?: Pick<DmarcAnswers, 'forget'>;
}

function toBody(domain: Domain, settings: SendingDnsSettings): DomainBody {
  const checks: RecordChecks = domain.recordChecks ?? {};
  const records: DnsRecord[] = expectedRecords(domain, settings).map((record) => {
    const check = checks[record.record];
    return {
      ...record,
      status: check?.status ?? 'pending',
      found: check?.found ?? [],
      checkedAt: check?.checkedAt ?? null,
    };
  });
  return {
    id: domain.id,
    name: domain.name,
    unicodeName: unicodeDomainName(domain.name),
    status: domain.status,
    dkimSelector: domain.dkimSelector,
    verifiedAt: domain.verifiedAt?.toISOString() ?? null,
    lastCheckedAt: domain.lastCheckedAt?.toISOString() ?? null,
    driftDetectedAt: domain.driftDetectedAt?.toISOString() ?? null,
    drift: domain.drift ?? [],
    records,
    createdAt: domain.createdAt.toISOString(),
  };
}

async function findOwnDomain(deps: Pick<DomainDeps, 'db'>, tenantId: string, id: string): Promise<Domain> {
  const domain = await modelsOf(deps.db.sequelize).Domain.findOne({ where: { id, tenantId } });
  if (!domain) throw new NotFoundError('Domain');
  return domain;
}

export async function createDomain(deps: DomainDeps, ctx: TenantContext, input: { name: string }): Promise<DomainBody> {
  const { tenantId } = ctx;
  const name = normalizeDomainName(input.name);
  const duplicate = () => new ConflictError(`${name} is already a sending domain of this tenant.`, 'DOMAIN_EXISTS');
  if (await modelsOf(deps.db.sequelize).Domain.findOne({ where: { tenantId, name }, attributes: ['id'] }))
    throw duplicate();
  const key = await generateDkimKey(deps.secrets.encryptionKey);
  let domain: Domain;
  try {
    domain = await modelsOf(deps.db.sequelize).Domain.create({
      tenantId,
      name,
      dkimSelector: key.selector,
      dkimPublicKey: key.publicKey,
      dkimPrivateKeySealed: key.privateKeySealed,
    });
  } catch (error) {
    if (error instanceof UniqueConstraintError) throw duplicate();
    throw error;
  }
  return toBody(domain, await loadSendingDnsSettings(deps.db.sequelize, deps.config));
}

export async function listDomains(deps: DomainDeps, ctx: TenantContext, page: { page: number; limit: number }) {
  const { tenantId } = ctx;
  const settings = await loadSendingDnsSettings(deps.db.sequelize, deps.config);
  return findPage(
    modelsOf(deps.db.sequelize).Domain,
    {
      where: { tenantId },
      order: [
        ['createdAt', 'DESC'],
        ['id', 'ASC'],
      ],
    },
    page,
    (rows) => rows.map((row) => toBody(row, settings)),
  );
}

export async function getDomainDns(deps: DomainDeps, ctx: TenantContext, input: { id: string }): Promise<DomainBody> {
  return toBody(
    await findOwnDomain(deps, ctx.tenantId, input.id),
    await loadSendingDnsSettings(deps.db.sequelize, deps.config),
  );
}

async function inspect(deps: DomainDeps, domain: Domain, settings: SendingDnsSettings): Promise<Inspection> {
  const lookup = createDnsLookup({ servers: deps.config.dnsServers, timeoutMs: deps.dnsTimeoutMs });
  return inspectDomain(lookup, domain, settings);
}

function changedRecords(before: RecordChecks, after: RecordChecks): DriftEntry[] {
  const drift: DriftEntry[] = [];
  for (const kind of Object.keys(after) as (keyof RecordChecks)[]) {
    const from = before[kind]?.status;
    const to = after[kind]!.status;
    // A resolver hiccup is not a change in what the customer published.
    if (from === undefined || from === 'pending' || from === 'error' || to === 'error' || from === to) continue;
    drift.push({ record: kind, from, to });
  }
  return drift;
}

/**
 * Looks the records up and stores what it saw. A verified domain stays verified when only resolver
 * failures (time-outs, SERVFAIL) stand in the way; real changes flip it to failed.
 * `recordDrift` (the daily re-check) also keeps which records changed since the previous check.
 */
export async function checkAndStore(
  deps: DomainDeps,
  domain: Domain,
  options: { recordDrift: boolean },
): Promise<{ domain: Domain; inspection: Inspection; settings: SendingDnsSettings }> {
  const settings = await loadSendingDnsSettings(deps.db.sequelize, deps.config);
  const inspection = await inspect(deps, domain, settings);
  const now = new Date();
  const checks: RecordChecks = {};
  for (const [kind, result] of Object.entries(inspection.records) as [
    keyof RecordChecks,
    { status: DnsRecord['status']; found: string[] },
  ][]) {
    checks[kind] = { status: result.status, found: result.found, checkedAt: now.toISOString() };
  }
  const passes = passesVerification(inspection);
  const keep = !passes && domain.status === 'verified' && onlyResolverTrouble(inspection);
  const status = passes || keep ? 'verified' : 'failed';
  const drift = options.recordDrift ? changedRecords(domain.recordChecks ?? {}, checks) : [];
  domain.set({
    status,
    recordChecks: checks,
    lastCheckedAt: now,
    verifiedAt:
      status === 'verified' ? (domain.status === 'verified' && domain.verifiedAt ? domain.verifiedAt : now) : null,
    ...(drift.length > 0 ? { driftDetectedAt: now, drift } : {}),
  });
  await domain.save();
  deps.dkimSigning.forget(domain.tenantId);
  return { domain, inspection, settings };
}

export async function verifyDomain(
  deps: DomainDeps,
  ctx: TenantContext,
  input: { id: string },
): Promise<VerifyDomainBody> {
  const { domain, inspection, settings } = await checkAndStore(
    deps,
    await findOwnDomain(deps, ctx.tenantId, input.id),
    {
      recordDrift: false,
    },
  );
  return { ...toBody(domain, settings), problems: inspection.problems };
}

/** Reads DNS and reports; writes nothing. */
export async function diagnoseDomain(
  deps: DomainDeps,
  ctx: TenantContext,
  input: { id: string },
): Promise<DiagnosisBody> {
  const domain = await findOwnDomain(deps, ctx.tenantId, input.id);
  const settings = await loadSendingDnsSettings(deps.db.sequelize, deps.config);
  const inspection = await inspect(deps, domain, settings);
  deps.senderRules?.forget(domain.name);
  const { report, problems: sending } = senderRulesOfInspection(
    inspection,
    domain.name,
    settings,
    deps.config.delivery === 'direct',
  );
  // A sending domain that also receives (an inbound domain of the tenant) has its MX explained too.
  const lookup = createDnsLookup({ servers: deps.config.dnsServers, timeoutMs: deps.dnsTimeoutMs });
  const problems = [
    ...sending,
    ...(await inboundMxProblems(
      { sequelize: deps.db.sequelize, config: deps.config },
      lookup,
      ctx.tenantId,
      domain.name,
    )),
  ];
  return {
    domain: domain.name,
    ok: !problems.some((problem) => problem.severity === 'error'),
    problems,
    publish: inspection.publish,
    senderRules: report,
    checkedAt: new Date().toISOString(),
  };
}

export async function deleteDomain(deps: DomainDeps, ctx: TenantContext, input: { id: string }): Promise<void> {
  const domain = await findOwnDomain(deps, ctx.tenantId, input.id);
  await domain.destroy();
  deps.dkimSigning.forget(ctx.tenantId);
}

/** May the tenant send as `domain` (an address or a bare domain)? True for a verified domain or a subdomain of one. */
export async function isVerifiedSenderDomain(
  deps: { dkimSigning: Pick<DkimKeys, 'verifiedDomain'> },
  tenantId: string,
  domain: string,
): Promise<boolean> {
  return (await deps.dkimSigning.verifiedDomain(tenantId, domain)) !== null;
}
