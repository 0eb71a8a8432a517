// DMARC aggregate reports: stored for the tenants that own the reported domain, listed per domain.
// A report about a domain nobody here owns is dropped with a log line: the reporter did nothing
// wrong (a typo in someone's rua, an old record) and must not receive a bounce for it.
import type { Sequelize } from 'sequelize';
import type { AppDeps } from '../../app-types.ts';
import type { TenantContext } from '../../context.ts';
import { NotFoundError } from '../../errors.ts';
import type { DmarcReportBody, DmarcSource } from '../../../shared/schemas/dmarc.ts';
import { insertReport, ownersOfDomain, tenantHasDomain, pageOfReports, recordsOf, type RecordRow } from './sql.ts';
import type { AttachmentOutcome } from './attachments.ts';

export interface DmarcLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

export interface DmarcDeps {
  sequelize: Sequelize;
  log: DmarcLog;
}

export interface ReceiveResult {
  /** Report copies stored (one per owning tenant). */
  stored: number;
  /** Attachments that were not reports, were unreadable, repeated, or about a domain nobody owns. */
  dropped: number;
}

/**
 * Stores every report read from a message's attachments (attachments.ts, in the inbound reader's
 * thread) and logs each refused one with the reason; never throws for the content of the mail.
 */
export async function receiveAggregateReports(
  deps: DmarcDeps,
  attachments: AttachmentOutcome[],
): Promise<ReceiveResult> {
  const result: ReceiveResult = { stored: 0, dropped: 0 };
  for (const outcome of attachments) {
    if (outcome.kind === 'unreadable') {
      deps.log.warn({ err: outcome.reason, filename: outcome.filename }, 'DMARC report dropped: unreadable');
      result.dropped++;
      continue;
    }
    const { report } = outcome;
    const owners = await ownersOfDomain(deps.sequelize, report.domain);
    if (owners.length === 0) {
      deps.log.info(
        { domain: report.domain, org: report.orgName, reportId: report.reportId },
        'DMARC report dropped: no tenant has this domain',
      );
      result.dropped++;
      continue;
    }
    for (const owner of owners) {
      const parsed = report;
      const fresh = await deps.sequelize.transaction((tx) => insertReport(deps.sequelize, owner, parsed, tx));
      if (fresh) result.stored++;
      else result.dropped++;
    }
    deps.log.info(
      { domain: report.domain, org: report.orgName, reportId: report.reportId, records: report.records.length },
      'DMARC report received',
    );
  }
  return result;
}

function toSource(row: RecordRow): DmarcSource {
  return {
    sourceIp: row.source_ip,
    count: row.message_count,
    disposition: row.disposition,
    headerFrom: row.header_from,
    dkim: { aligned: row.dkim_aligned, result: row.dkim_result, domain: row.dkim_domain },
    spf: { aligned: row.spf_aligned, result: row.spf_result, domain: row.spf_domain },
    dmarc: row.dkim_aligned || row.spf_aligned ? 'pass' : 'fail',
  };
}

/** A page of a tenant's domain's reports, newest period first, each with its sources (most messages first). */
export async function listDmarcReports(
  deps: Pick<AppDeps, 'db'>,
  ctx: TenantContext,
  input: { domainId: string; page: number; limit: number },
) {
  const { sequelize } = deps.db;
  const { domainId, ...page } = input;
  if (!(await tenantHasDomain(sequelize, ctx.tenantId, domainId))) throw new NotFoundError('Domain');
  const { rows, total } = await pageOfReports(sequelize, domainId, page);
  const records = await recordsOf(
    sequelize,
    rows.map((row) => row.id),
  );
  const data: DmarcReportBody[] = rows.map((row) => {
    const sources = records.filter((record) => record.report_id === row.id).map(toSource);
    return {
      id: row.id,
      orgName: row.org_name,
      orgEmail: row.org_email,
      reportId: row.report_id,
      dateBegin: new Date(row.date_begin).toISOString(),
      dateEnd: new Date(row.date_end).toISOString(),
      policy: row.policy,
      receivedAt: new Date(row.received_at).toISOString(),
      messages: sources.reduce((sum, source) => sum + source.count, 0),
      failing: sources.filter((source) => source.dmarc === 'fail').reduce((sum, source) => sum + source.count, 0),
      sources,
    };
  });
  return { data, meta: { page: page.page, limit: page.limit, total, totalPages: Math.ceil(total / page.limit) } };
}
