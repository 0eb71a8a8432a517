// SQL of the DMARC report tables (migrations 0225, 0226): plain statements, no Sequelize models,
// since a report is written once and read as a page of rows.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { DmarcAggregateReport } from './parse.ts';

export interface ReportRow {
  id: string;
  org_name: string;
  org_email: string | null;
  report_id: string;
  date_begin: Date;
  date_end: Date;
  policy: Record<string, string>;
  received_at: Date;
}

export interface RecordRow {
  report_id: string;
  source_ip: string;
  message_count: number;
  disposition: string;
  header_from: string | null;
  dkim_aligned: boolean;
  spf_aligned: boolean;
  dkim_domain: string | null;
  dkim_result: string | null;
  spf_domain: string | null;
  spf_result: string | null;
}

/** Domains named `name` whose owner proved it once (verified at some time): only they see the domain's reports. */
export async function ownersOfDomain(
  sequelize: Sequelize,
  name: string,
): Promise<Array<{ id: string; tenant_id: string }>> {
  return sequelize.query(`SELECT id, tenant_id FROM domains WHERE name = :name AND verified_at IS NOT NULL`, {
    replacements: { name },
    type: QueryTypes.SELECT,
  });
}

export async function tenantHasDomain(sequelize: Sequelize, tenantId: string, domainId: string): Promise<boolean> {
  const rows = await sequelize.query(`SELECT 1 FROM domains WHERE id = :domainId AND tenant_id = :tenantId`, {
    replacements: { domainId, tenantId },
    type: QueryTypes.SELECT,
  });
  return rows.length > 0;
}

/** Stores the report for one domain; false when this reporter's report id is already stored. */
export async function insertReport(
  sequelize: Sequelize,
  owner: { id: string; tenant_id: string },
  report: DmarcAggregateReport,
  tx: Transaction,
): Promise<boolean> {
  const [inserted] = await sequelize.query<{ id: string }>(
    `INSERT INTO dmarc_reports (tenant_id, domain_id, org_name, org_email, report_id, date_begin, date_end, policy)
     VALUES (:tenantId, :domainId, :orgName, :orgEmail, :reportId, :dateBegin, :dateEnd, CAST(:policy AS jsonb))
     ON CONFLICT (domain_id, org_name, report_id) DO NOTHING RETURNING id`,
    {
      replacements: {
        tenantId: owner.tenant_id,
        domainId: owner.id,
        orgName: report.orgName,
        orgEmail: report.orgEmail,
        reportId: report.reportId,
        dateBegin: report.dateBegin,
        dateEnd: report.dateEnd,
        policy: JSON.stringify(report.policy),
      },
      type: QueryTypes.SELECT,
      transaction: tx,
    },
  );
  if (!inserted) return false;
  if (report.records.length === 0) return true;
  // One statement whatever the row count (big senders' reports run to thousands of rows): column arrays, unnested.
  const column = <K extends keyof DmarcAggregateReport['records'][number]>(key: K) =>
    report.records.map((record) => record[key]);
  await sequelize.query(
    `INSERT INTO dmarc_report_records (report_id, source_ip, message_count, disposition, header_from, dkim_aligned, spf_aligned, dkim_domain, dkim_result, spf_domain, spf_result)
     SELECT :reportId, * FROM unnest(ARRAY[:ips]::text[], ARRAY[:counts]::int[], ARRAY[:dispositions]::text[], ARRAY[:froms]::text[],
       ARRAY[:dkimAligned]::boolean[], ARRAY[:spfAligned]::boolean[], ARRAY[:dkimDomains]::text[], ARRAY[:dkimResults]::text[],
       ARRAY[:spfDomains]::text[], ARRAY[:spfResults]::text[])`,
    {
      replacements: {
        reportId: inserted.id,
        ips: column('sourceIp'),
        counts: column('count'),
        dispositions: column('disposition'),
        froms: column('headerFrom'),
        dkimAligned: column('dkimAligned'),
        spfAligned: column('spfAligned'),
        dkimDomains: column('dkimDomain'),
        dkimResults: column('dkimResult'),
        spfDomains: column('spfDomain'),
        spfResults: column('spfResult'),
      },
      transaction: tx,
    },
  );
  return true;
}

export async function pageOfReports(
  sequelize: Sequelize,
  domainId: string,
  page: { page: number; limit: number },
): Promise<{ rows: ReportRow[]; total: number }> {
  const [{ total }] = await sequelize.query<{ total: number }>(
    `SELECT count(*)::int AS total FROM dmarc_reports WHERE domain_id = :domainId`,
    { replacements: { domainId }, type: QueryTypes.SELECT },
  );
  const rows = await sequelize.query<ReportRow>(
    `SELECT id, org_name, org_email, report_id, date_begin, date_end, policy, received_at FROM dmarc_reports
      WHERE domain_id = :domainId ORDER BY date_end DESC, id LIMIT :limit OFFSET :offset`,
    { replacements: { domainId, limit: page.limit, offset: (page.page - 1) * page.limit }, type: QueryTypes.SELECT },
  );
  return { rows, total };
}

export async function recordsOf(sequelize: Sequelize, reportIds: string[]): Promise<RecordRow[]> {
  if (reportIds.length === 0) return [];
  return sequelize.query<RecordRow>(
    `SELECT report_id, source_ip, message_count, disposition, header_from, dkim_aligned, spf_aligned, dkim_domain, dkim_result, spf_domain, spf_result
       FROM dmarc_report_records WHERE report_id IN (:reportIds) ORDER BY report_id, message_count DESC, id`,
    { replacements: { reportIds }, type: QueryTypes.SELECT },
  );
}
