// Reports kept without effect (inbound_reports): a bounce or complaint that names no recipient its
// send went to, names no send of ours, is an ARF at fbl@ not signed by a listed feedback-loop operator
// (over the headers it is read by), or is a delivery report that did not come to a send's return path.
// They change nothing for any tenant; platform admins read them to spot forgeries and misrouted
// reports, and /metrics counts them.
import { QueryTypes, type Sequelize } from 'sequelize';
import type {
  KeptReportBody,
  KeptReportDisposition,
  KeptReportsQuery,
} from '../../../shared/schemas/inbound-reports.ts';
import { pageOf, pageWindow, type Page } from '../../db/paging.ts';

export interface KeptReport {
  disposition: KeptReportDisposition;
  kind: 'bounce' | 'complaint';
  source: string;
  reason: string;
  tenantId?: string | null;
  emailId?: string | null;
  reporter?: string | null;
  recipients?: string[];
  messageIds?: string[];
}

/** Bounds what a stranger can make us store per report. */
const MAX_LISTED = 20;
const clip = (values: string[] | undefined) => (values ?? []).slice(0, MAX_LISTED).map((value) => value.slice(0, 320));

export async function insertKeptReport(sequelize: Sequelize, report: KeptReport): Promise<void> {
  await sequelize.query(
    `INSERT INTO inbound_reports (disposition, kind, source, reason, tenant_id, email_id, reporter, recipients, message_ids)
     VALUES (:disposition, :kind, :source, :reason, :tenantId, :emailId, :reporter,
             ARRAY(SELECT jsonb_array_elements_text(CAST(:recipients AS jsonb))),
             ARRAY(SELECT jsonb_array_elements_text(CAST(:messageIds AS jsonb))))`,
    {
      replacements: {
        disposition: report.disposition,
        kind: report.kind,
        source: report.source,
        reason: report.reason.slice(0, 1000),
        tenantId: report.tenantId ?? null,
        emailId: report.emailId ?? null,
        reporter: report.reporter?.slice(0, 320) ?? null,
        // As JSON: an empty list stays a typed empty array.
        recipients: JSON.stringify(clip(report.recipients)),
        messageIds: JSON.stringify(clip(report.messageIds)),
      },
    },
  );
}

interface KeptReportRow {
  id: string;
  disposition: KeptReportDisposition;
  kind: 'bounce' | 'complaint';
  source: string;
  reason: string;
  tenant_id: string | null;
  email_id: string | null;
  reporter: string | null;
  recipients: string[];
  message_ids: string[];
  received_at: Date | string;
}

export async function listKeptReports(sequelize: Sequelize, query: KeptReportsQuery): Promise<Page<KeptReportBody>> {
  const window = pageWindow(query);
  const where = query.disposition ? 'WHERE disposition = :disposition' : '';
  const replacements = { disposition: query.disposition ?? null, limit: window.limit, offset: window.offset };
  const rows = await sequelize.query<KeptReportRow>(
    `SELECT * FROM inbound_reports ${where} ORDER BY received_at DESC, id LIMIT :limit OFFSET :offset`,
    { replacements, type: QueryTypes.SELECT },
  );
  const [{ total }] = await sequelize.query<{ total: number }>(
    `SELECT count(*)::int AS total FROM inbound_reports ${where}`,
    { replacements, type: QueryTypes.SELECT },
  );
  return pageOf(
    rows.map((row) => ({
      id: row.id,
      disposition: row.disposition,
      kind: row.kind,
      source: row.source,
      reason: row.reason,
      tenantId: row.tenant_id,
      emailId: row.email_id,
      reporter: row.reporter,
      recipients: row.recipients,
      messageIds: row.message_ids,
      receivedAt: new Date(row.received_at).toISOString(),
    })),
    window,
    total,
  );
}

/** Counts by disposition and kind, for /metrics (every node answers the same: they are rows). */
export async function countKeptReports(
  sequelize: Sequelize,
): Promise<Array<{ disposition: KeptReportDisposition; kind: string; count: number }>> {
  return sequelize.query(
    `SELECT disposition, kind, count(*)::int AS count FROM inbound_reports GROUP BY disposition, kind ORDER BY 1, 2`,
    { type: QueryTypes.SELECT },
  );
}
