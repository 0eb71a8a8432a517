// The statements behind GET /emails/logs. Every filter has an index (migrations 0010, 0200, 0205):
// tenant + time (tenant_id, created_at), status (tenant_id, status, created_at), recipient (GIN over
// email_bare_addresses(to_addresses)), tag (GIN over tags), message id (message_id). Pages are read
// in (created_at, id) DESC order, by OFFSET for the first MAX_LOG_OFFSET rows or after a keyset cursor.
import { QueryTypes, type Sequelize } from 'sequelize';
import type { KeysetCursor } from '../../db/keyset.ts';
import type { EmailLogSummary } from '../../../shared/schemas/emails.ts';
import type { EmailStatus } from '../../../shared/constants.ts';

export interface LogFilter {
  tenantId: string;
  status?: string;
  to?: string;
  messageId?: string;
  tag?: string;
  since?: Date;
  until?: Date;
}

/** The columns every log listing reads (the list, the live tail). */
export interface LogRowFields {
  id: string;
  status: string;
  message_id: string;
  from_address: string;
  to_addresses: string[];
  cc_addresses: string[];
  subject: string;
  tags: string[];
  project_id: string | null;
  template_version_id: string | null;
  captured: boolean;
  test_mode: boolean;
  attempts: number;
  error: string | null;
  sent_at: Date | string | null;
  created_at: Date | string;
}

export interface LogSummaryRow extends LogRowFields {
  /** created_at as PostgreSQL prints it: the cursor keeps the microseconds a JS Date would drop. */
  position: string;
}

/** A listed row as the API answers it (GET /emails/logs, and the live tail's frames). */
export function logSummaryOfRow(row: LogRowFields): EmailLogSummary {
  return {
    id: row.id,
    status: row.status as EmailStatus,
    messageId: row.message_id,
    from: row.from_address,
    to: row.to_addresses,
    cc: row.cc_addresses,
    subject: row.subject,
    tags: row.tags,
    projectId: row.project_id,
    templateVersionId: row.template_version_id,
    captured: row.captured,
    testMode: row.test_mode,
    attempts: row.attempts,
    error: row.error,
    sentAt: row.sent_at ? new Date(row.sent_at).toISOString() : null,
    createdAt: new Date(row.created_at).toISOString(),
  };
}

const SUMMARY_COLUMNS = `id, status, message_id, from_address, to_addresses, cc_addresses, subject, tags, project_id,
  template_version_id, captured, test_mode, attempts, error, sent_at, created_at, created_at::text AS position`;

function whereOf(filter: LogFilter): { sql: string; replacements: Record<string, unknown> } {
  const clauses = ['tenant_id = :tenantId'];
  const replacements: Record<string, unknown> = { tenantId: filter.tenantId };
  if (filter.status) {
    clauses.push('status = :status');
    replacements.status = filter.status;
  }
  if (filter.to) {
    // The same function as the index's expression, so "Name <A@x.org>" finds a@x.org too.
    clauses.push('email_bare_addresses(to_addresses) @> email_bare_addresses(ARRAY[CAST(:to AS text)])');
    replacements.to = filter.to;
  }
  if (filter.messageId) {
    const bare = filter.messageId.trim().replace(/^<|>$/g, '');
    clauses.push('message_id IN (:messageIds)');
    replacements.messageIds = [bare, `<${bare}>`];
  }
  if (filter.tag) {
    clauses.push('tags @> ARRAY[CAST(:tag AS text)]');
    replacements.tag = filter.tag;
  }
  if (filter.since) {
    clauses.push('created_at >= :since');
    replacements.since = filter.since;
  }
  if (filter.until) {
    clauses.push('created_at < :until');
    replacements.until = filter.until;
  }
  return { sql: clauses.join(' AND '), replacements };
}

/** One page plus whether another follows (limit + 1 rows are read). */
export async function findLogPage(
  sequelize: Sequelize,
  filter: LogFilter,
  page: { limit: number; offset: number; after: KeysetCursor | null },
): Promise<{ rows: LogSummaryRow[]; hasMore: boolean }> {
  const where = whereOf(filter);
  let sql = where.sql;
  const replacements = { ...where.replacements, limit: page.limit + 1, offset: page.offset };
  if (page.after) {
    sql += ' AND (created_at, id) < (CAST(:afterAt AS timestamptz), CAST(:afterId AS uuid))';
    Object.assign(replacements, { afterAt: page.after.at, afterId: page.after.id });
  }
  const rows = await sequelize.query<LogSummaryRow>(
    `SELECT ${SUMMARY_COLUMNS} FROM email_logs WHERE ${sql} ORDER BY created_at DESC, id DESC LIMIT :limit OFFSET :offset`,
    { type: QueryTypes.SELECT, replacements },
  );
  return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}

/**
 * Planner cost above which meta.total is not counted: the planner's estimate answers instead. Measured
 * with 10,000,000 logs in a tenant (bench:scale): the bounded counts of a page-1 list, a status or a
 * recipient search cost 290–1,500 and ran in 1–10 ms; a tag search, which can only intersect the tag's
 * GIN bitmap with the time range's, cost 15,000–24,000 and ran in 40–160 ms, more than its page.
 */
export const COUNT_COST_BOUND = 5_000;

interface PlanNode {
  'Node Type': string;
  'Total Cost': number;
  'Plan Rows': number;
  Plans?: PlanNode[];
}

/** The rows the planner expects below the bounded count's LIMIT: its estimate of all matches. */
function estimatedMatches(plan: PlanNode): number {
  for (let node: PlanNode | undefined = plan; node; node = node.Plans?.[0]) {
    if (node['Node Type'] === 'Limit') return node.Plans?.[0]['Plan Rows'] ?? node['Plan Rows'];
  }
  return plan['Plan Rows'];
}

/**
 * The number of matching logs: counted up to `bound` (a walk of at most bound + 1 entries) when the
 * planner prices that count at most `costBound`; otherwise, or beyond `bound`, the planner's estimate
 * for the same WHERE (`estimate: true`). One EXPLAIN decides, before anything is read.
 */
export async function countLogs(
  sequelize: Sequelize,
  filter: LogFilter,
  bound: number,
  costBound = COUNT_COST_BOUND,
): Promise<{ total: number; estimate: boolean }> {
  const where = whereOf(filter);
  const countSql = `SELECT count(*)::int AS n FROM (SELECT 1 FROM email_logs WHERE ${where.sql} LIMIT :bound) AS bounded`;
  const replacements = { ...where.replacements, bound: bound + 1 };
  const [explained] = await sequelize.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${countSql}`, {
    type: QueryTypes.SELECT,
    replacements,
  });
  const json = explained['QUERY PLAN'];
  const plan = ((typeof json === 'string' ? JSON.parse(json) : json) as [{ Plan: PlanNode }])[0].Plan;
  const estimated = Math.round(estimatedMatches(plan));
  if (plan['Total Cost'] > costBound) return { total: estimated, estimate: true };
  const [counted] = await sequelize.query<{ n: number }>(countSql, { type: QueryTypes.SELECT, replacements });
  if (counted.n <= bound) return { total: counted.n, estimate: false };
  // Never below what was just counted: the estimate only ever says "at least this many, about".
  return { total: Math.max(estimated, counted.n), estimate: true };
}
