// A tenant's inbound domains (issue 52): added pending, verified when their MX names the service's
// inbound host (INBOUND_MX_HOST, else the mail domain). The check explains what is wrong: no MX, an
// MX elsewhere, or ours beside other hosts (mail would split between them: warned, still verified
// when ours is the most preferred). One tenant receives on a name: the first to verify it.
import type { Sequelize } from 'sequelize';
import type { Config } from '../../config.ts';
import type { TenantContext } from '../../context.ts';
import { ConflictError, NotFoundError } from '../../errors.ts';
import { pageOf, pageWindow } from '../../db/paging.ts';
import { normalizeDomainName } from '../../mail/domain-names.ts';
import type { PageQuery } from '../../../shared/schemas/common.ts';
import { createDnsLookup, type DnsLookup } from '../domains/dns-lookup.ts';
import type { InboundDomain, InboundDomainsPage } from '../../../shared/schemas/inbound.ts';
import type { DiagnosisCode, DiagnosisProblem } from '../../../shared/schemas/domains.ts';
import { inboundMxHost, type InboundServiceDeps } from './service.ts';
import {
  deleteDomain as deleteDomainRow,
  domainByName,
  domainRow,
  insertDomain,
  listDomains as listDomainRows,
  recordCheck,
  type InboundDomainRow,
} from './sql/domains.ts';

export type InboundDomainDeps = InboundServiceDeps & { config: Pick<Config, 'dnsServers'> };

export interface InboundMxCheck {
  verified: boolean;
  mxFound: string[];
  /** What is wrong, as the verify answer says it; null when nothing is. */
  explanation: string | null;
  /** The same as a diagnosis code and its fix (GET /domains/{id}/diagnose); null when nothing is wrong. */
  code: DiagnosisCode | null;
  fix: string | null;
}

const iso = (date: Date | null) => (date ? new Date(date).toISOString() : null);

function toDomainDto(deps: InboundDomainDeps, row: InboundDomainRow): InboundDomain {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    expectedMx: inboundMxHost(deps.config),
    mxFound: row.mx_found,
    explanation: row.explanation,
    checkedAt: iso(row.checked_at),
    verifiedAt: iso(row.verified_at),
    createdAt: iso(row.created_at)!,
  };
}

/** What the MX records of `name` say about receiving there; verified when ours is the most preferred. */
export async function diagnoseInboundMx(dns: DnsLookup, name: string, expected: string): Promise<InboundMxCheck> {
  const publish = `publish "${name}. MX 10 ${expected}."`;
  const answer = await dns.mx(name);
  if (answer.kind !== 'ok') {
    const failed = answer.kind === 'timeout' || answer.kind === 'error';
    const why = failed
      ? `the MX look-up of ${name} failed (${answer.kind === 'error' ? answer.code : 'timeout'}): try again later`
      : `${name} has no MX record: ${publish}`;
    const code = failed ? (answer.kind === 'timeout' ? 'DNS_TIMEOUT' : 'DNS_ERROR') : 'INBOUND_MX_MISSING';
    return { verified: false, mxFound: [], explanation: why, code, fix: failed ? 'try again later' : publish };
  }
  const sorted = [...answer.values].sort((a, b) => a.priority - b.priority);
  const hosts = sorted.map((mx) => mx.exchange);
  const ours = sorted.filter((mx) => mx.exchange === expected);
  if (ours.length === 0)
    return {
      verified: false,
      mxFound: hosts,
      explanation: `the MX of ${name} names ${hosts.join(', ')}, not ${expected}: ${publish}`,
      code: 'INBOUND_MX_ELSEWHERE',
      fix: `replace the MX records of ${name}: ${publish}`,
    };
  const others = sorted.filter((mx) => mx.exchange !== expected);
  if (others.length === 0) return { verified: true, mxFound: hosts, explanation: null, code: null, fix: null };
  const preferred = ours[0].priority <= sorted[0].priority;
  const split = `${name} also has MX ${others.map((mx) => `${mx.priority} ${mx.exchange}`).join(', ')}: senders may deliver there instead, and those messages never reach your routes`;
  const fix = `remove the MX records of ${name} other than ${expected}`;
  return preferred
    ? { verified: true, mxFound: hosts, explanation: `warning: ${split}`, code: 'INBOUND_MX_SPLIT', fix }
    : {
        verified: false,
        mxFound: hosts,
        explanation: `${split}; ${expected} must be the most preferred (lowest number)`,
        code: 'INBOUND_MX_SPLIT',
        fix,
      };
}

/**
 * What `GET /domains/{id}/diagnose` adds for a sending domain that is also one of the tenant's inbound
 * domains: its MX, checked as POST /inbound/domains/{id}/verify checks it (nothing for another name).
 */
export async function inboundMxProblems(
  deps: { sequelize: Sequelize; config: Pick<Config, 'publicUrl' | 'inboundMxHost'> },
  dns: DnsLookup,
  tenantId: string,
  name: string,
): Promise<DiagnosisProblem[]> {
  if (!(await domainByName(deps.sequelize, tenantId, name))) return [];
  const check = await diagnoseInboundMx(dns, name, inboundMxHost(deps.config));
  if (!check.code || !check.explanation || !check.fix) return [];
  const severity = check.verified ? 'warning' : 'error';
  return [{ record: 'inboundMx', severity, code: check.code, message: check.explanation, fix: check.fix }];
}

export async function addInboundDomain(
  deps: InboundDomainDeps,
  ctx: TenantContext,
  name: string,
): Promise<InboundDomain> {
  const row = await insertDomain(deps.db.sequelize, ctx.tenantId, normalizeDomainName(name));
  if (!row) throw new ConflictError(`${name} is already an inbound domain of this tenant.`, 'DUPLICATE_DOMAIN');
  return toDomainDto(deps, row);
}

export async function listInboundDomains(
  deps: InboundDomainDeps,
  ctx: TenantContext,
  query: PageQuery,
): Promise<InboundDomainsPage> {
  const window = pageWindow(query);
  const { rows, total } = await listDomainRows(deps.db.sequelize, ctx.tenantId, window);
  return pageOf(
    rows.map((row) => toDomainDto(deps, row)),
    window,
    total,
  );
}

export async function getInboundDomain(
  deps: InboundDomainDeps,
  ctx: TenantContext,
  id: string,
): Promise<InboundDomain> {
  const row = await domainRow(deps.db.sequelize, ctx.tenantId, id);
  if (!row) throw new NotFoundError('Inbound domain');
  return toDomainDto(deps, row);
}

export async function verifyInboundDomain(
  deps: InboundDomainDeps,
  ctx: TenantContext,
  id: string,
): Promise<InboundDomain> {
  const row = await domainRow(deps.db.sequelize, ctx.tenantId, id);
  if (!row) throw new NotFoundError('Inbound domain');
  const check = await diagnoseInboundMx(
    createDnsLookup({ servers: deps.config.dnsServers }),
    row.name,
    inboundMxHost(deps.config),
  );
  try {
    const updated = await recordCheck(deps.db.sequelize, ctx.tenantId, id, check);
    if (!updated) throw new NotFoundError('Inbound domain');
    return toDomainDto(deps, updated);
  } catch (error) {
    if ((error as { parent?: { code?: string } }).parent?.code === '23505')
      throw new ConflictError(`${row.name} already receives mail for another tenant.`, 'DOMAIN_TAKEN');
    throw error;
  }
}

export async function deleteInboundDomain(deps: InboundDomainDeps, ctx: TenantContext, id: string): Promise<void> {
  if (!(await deleteDomainRow(deps.db.sequelize, ctx.tenantId, id))) throw new NotFoundError('Inbound domain');
}
