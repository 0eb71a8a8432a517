// The statements behind GET /emails/logs. Every filter has an index (migrations 0200, 0205, 0310,
// 0430): tenant + time (tenant_id, created_at), status (tenant_id, status, created_at), message id
// (message_id), recipient (GIN over tenant-scoped keys), tag (the btree of email_log_tags (tenant_id,
// tag, created_at, id)). Pages are read in (created_at, id) DESC order, by OFFSET for the first
// MAX_LOG_OFFSET rows or after a keyset cursor. The plan of each search is chosen by the form of its
// statement, not by the planner's guess of how many rows match (issue 27): a message id or recipient
// search reads its key's matches first and sorts those few; a tag search walks the tag's entries
// newest first; the list and a status search walk the index whose order is the page's.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { KeysetCursor } from '../../../db/keyset.ts';
import { LOG_ROW_COLUMNS, type LogRowFields } from './log-columns.ts';

export interface LogFilter {
  tenantId: string;
  status?: string;
  to?: string;
  messageId?: string;
  tag?: string;
  since?: Date;
  until?: Date;
}

export interface LogSummaryRow extends LogRowFields {
  /** created_at as PostgreSQL prints it: the cursor keeps the microseconds a JS Date would drop. */
  position: string;
}

const SUMMARY_COLUMNS = `${LOG_ROW_COLUMNS}, created_at::text AS position`;

/** What a search reads of each candidate row: what its filters and its order test, nothing more. */
const CANDIDATE_COLUMNS = 'id, tenant_id, status, message_id, to_addresses, tags, created_at';

/**
 * The most matches a key-first search reads and sorts itself. More than this many matches of a
 * recipient are dense enough in the tenant's history that walking it newest first finds a
 * page sooner than sorting them all.
 */
export const KEY_FIRST_CAP = 5_000;

interface Clause {
  sql: string;
  replacements: Record<string, unknown>;
}

/**
 * The indexed condition a key-first search starts from, when it has one: the message id (btree),
 * else the recipient as a tenant-scoped key (GIN, migration 0310). Nothing else is in it, not even
 * the time range (with it the planner may walk a created_at index instead): the planner reads the
 * key's index and nothing else, with or without statistics, one cheap probe per partition. A tag
 * alone is no key: its search walks its entries (tagWalkPageSql).
 */
function keyOf(filter: LogFilter): Clause | null {
  if (filter.messageId) {
    const bare = filter.messageId.trim().replace(/^<|>$/g, '');
    return { sql: 'message_id IN (:messageIds)', replacements: { messageIds: [bare, `<${bare}>`] } };
  }
  if (filter.to) {
    return {
      sql: 'email_log_recipient_keys(tenant_id, to_addresses) @> email_log_recipient_keys(CAST(:tenantId AS uuid), ARRAY[CAST(:to AS text)])',
      replacements: { tenantId: filter.tenantId, to: filter.to },
    };
  }
  return null;
}

/** Every condition of the search, as filters on rows (the key's conditions included). */
function whereOf(filter: LogFilter): Clause {
  const clauses = ['tenant_id = :tenantId'];
  const replacements: Record<string, unknown> = { tenantId: filter.tenantId };
  if (filter.status) {
    clauses.push('status = :status');
    replacements.status = filter.status;
  }
  if (filter.to) {
    // The same normalisation as the key's, so "Name <A@x.org>" finds a@x.org too.
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

/** The rows a search reads: behind an OFFSET 0 fence of its key when it has one, else the table. */
function sourceOf(filter: LogFilter): Clause {
  const key = keyOf(filter);
  if (!key) return { sql: 'email_logs', replacements: {} };
  return {
    sql: `(SELECT ${CANDIDATE_COLUMNS} FROM email_logs WHERE ${key.sql} OFFSET 0) AS email_logs`,
    replacements: key.replacements,
  };
}

/**
 * A probe's tenant check, the tenant compared as text so that no index serves it: as a uuid, on a
 * partition whose statistics lagged, the planner ANDed each probe of a row by (id, created_at) with a
 * bitmap of the tenant's whole (tenant_id, created_at) index, 75–110 ms a row at 300,000 logs written
 * through the API (bench:scale, issue 27).
 */
const PROBE_TENANT = 'CAST(tenant_id AS text) = CAST(:tenantId AS text)';

export type PageWindow = { limit: number; offset: number; after: KeysetCursor | null };

function pageWhereOf(filter: LogFilter, after: KeysetCursor | null): Clause {
  const where = whereOf(filter);
  if (!after) return where;
  return {
    sql: `${where.sql} AND (created_at, id) < (CAST(:afterAt AS timestamptz), CAST(:afterId AS uuid))`,
    replacements: { ...where.replacements, afterAt: after.at, afterId: after.id },
  };
}

/**
 * A page over a bounded set of candidate rows (the CTE `candidates`, read first): the filters, the
 * sort and the page applied to those, then the page's rows read by primary key. `candidates` in the
 * answer says how many were read, so the caller knows whether the bound cut the set short.
 */
function pageOverCandidates(candidates: Clause, filter: LogFilter, page: PageWindow): Clause {
  const where = pageWhereOf(filter, page.after);
  // LATERAL: each of the page's rows is one probe of (id, created_at), whatever the settings, its
  // tenant checked by PROBE_TENANT.
  return {
    sql: `WITH candidates AS MATERIALIZED (${candidates.sql})
      SELECT n.candidates, p.* FROM (SELECT count(*)::int AS candidates FROM candidates) AS n
        LEFT JOIN LATERAL (SELECT found.* FROM (SELECT id, created_at FROM candidates AS email_logs
            WHERE ${where.sql} ORDER BY created_at DESC, id DESC LIMIT :limit OFFSET :offset) AS hit
          CROSS JOIN LATERAL (SELECT ${SUMMARY_COLUMNS} FROM email_logs
            WHERE email_logs.id = hit.id AND email_logs.created_at = hit.created_at
              AND ${PROBE_TENANT}) AS found) AS p ON true
      ORDER BY p.created_at DESC, p.id DESC`,
    replacements: { ...candidates.replacements, ...where.replacements, limit: page.limit + 1, offset: page.offset },
  };
}

/**
 * Key first: at most KEY_FIRST_CAP + 1 matches of the key, read through its index in no order, then
 * sorted. Above the cap the page may be incomplete and the caller walks instead. Null without a key.
 */
export function keyFirstPageSql(filter: LogFilter, page: PageWindow): Clause | null {
  const key = keyOf(filter);
  if (!key) return null;
  const candidates = `SELECT ${CANDIDATE_COLUMNS} FROM email_logs WHERE ${key.sql} LIMIT ${KEY_FIRST_CAP + 1}`;
  return pageOverCandidates({ sql: candidates, replacements: key.replacements }, filter, page);
}

/**
 * A tag's entries in email_log_tags (migration 0430) newest first, within the time range and after
 * the cursor: conditions on the entries' own columns, so that they bound the walk of the btree
 * (tenant_id, tag, created_at, id) rather than filter the logs it reaches.
 */
function tagEntriesOf(filter: LogFilter & { tag: string }, after: KeysetCursor | null): Clause {
  const range = pageWhereOf({ tenantId: filter.tenantId, since: filter.since, until: filter.until }, after);
  return {
    sql: `SELECT id, created_at FROM email_log_tags WHERE ${range.sql} AND tag = CAST(:tag AS text)`,
    replacements: { ...range.replacements, tag: filter.tag },
  };
}

/**
 * Each entry's log, one probe of (id, created_at) with the search's other condition (the status) and
 * PROBE_TENANT.
 */
function tagProbeOf(filter: LogFilter, columns: string): Clause {
  const status = filter.status ? ' AND status = CAST(:status AS text)' : '';
  return {
    sql: `SELECT ${columns} FROM email_logs WHERE email_logs.id = entry.id AND email_logs.created_at = entry.created_at
        AND ${PROBE_TENANT}${status}`,
    replacements: { tenantId: filter.tenantId, ...(filter.status ? { status: filter.status } : {}) },
  };
}

/**
 * A tag's page (without a recipient or message id, which go key first and filter the tag): its
 * entries walked newest first along the btree, each joined to its log, stopping at limit + 1 logs.
 * The cost is the page's entries (plus those of the OFFSET, or the rows a status skips), whether the
 * tag is on every log or on one in a million and wherever in the range its matches lie.
 */
export function tagWalkPageSql(filter: LogFilter & { tag: string }, page: PageWindow): Clause {
  const entries = tagEntriesOf(filter, page.after);
  const probe = tagProbeOf(filter, SUMMARY_COLUMNS);
  return {
    sql: `SELECT found.* FROM (${entries.sql}) AS entry CROSS JOIN LATERAL (${probe.sql}) AS found
      ORDER BY entry.created_at DESC, entry.id DESC LIMIT :limit OFFSET :offset`,
    replacements: { ...entries.replacements, ...probe.replacements, limit: page.limit + 1, offset: page.offset },
  };
}

/** A page read newest first along (tenant_id, created_at) or (tenant_id, status, created_at). */
export function walkPageSql(filter: LogFilter, page: PageWindow): Clause {
  const where = pageWhereOf(filter, page.after);
  return {
    sql: `SELECT ${SUMMARY_COLUMNS} FROM email_logs WHERE ${where.sql} ORDER BY created_at DESC, id DESC LIMIT :limit OFFSET :offset`,
    replacements: { ...where.replacements, limit: page.limit + 1, offset: page.offset },
  };
}

/**
 * The window and the walks follow an index in the page's order, (tenant_id, created_at) or (tenant_id,
 * status, created_at), and stop at their LIMIT: never a scan, a bitmap or a sort of the tenant's
 * rows, whatever the planner expects of the filters (a partition without statistics expects few).
 */
export const NEWEST_FIRST =
  'SET LOCAL enable_bitmapscan = off; SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off';

/** Runs `read` in a transaction with the NEWEST_FIRST settings: the pages' and the counts' walks. */
function readNewestFirst<T>(sequelize: Sequelize, read: (transaction: Transaction) => Promise<T>): Promise<T> {
  return sequelize.transaction(async (transaction) => {
    await sequelize.query(NEWEST_FIRST, { transaction });
    return read(transaction);
  });
}

type CandidateRow = LogSummaryRow & { candidates: number };

/** The filter when its search walks a tag's entries: a tag without a recipient or message id. */
function tagSearchOf(filter: LogFilter): (LogFilter & { tag: string }) | null {
  return filter.tag && !keyOf(filter) ? { ...filter, tag: filter.tag } : null;
}

/**
 * One page plus whether another follows (limit + 1 rows are read). A tag search walks the tag's
 * entries; a recipient or message id reads its key's matches, and when a key has more than
 * KEY_FIRST_CAP (dense), walks the tenant's history newest first. Every walk runs with bitmap scans
 * off, because on a partition without statistics the planner expects few matches and would rather
 * collect and sort all of the tenant's rows. The list and a status search walk from the start.
 */
export async function findLogPage(
  sequelize: Sequelize,
  filter: LogFilter,
  page: PageWindow,
): Promise<{ rows: LogSummaryRow[]; hasMore: boolean }> {
  const answer = (rows: LogSummaryRow[]) => ({ rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit });
  const candidatePage = async (statement: Clause, transaction?: Transaction) => {
    const found = await sequelize.query<CandidateRow>(statement.sql, {
      type: QueryTypes.SELECT,
      replacements: statement.replacements,
      transaction,
    });
    return { candidates: found[0].candidates, rows: found.filter((row) => row.id !== null) };
  };
  const keyFirst = keyFirstPageSql(filter, page);
  const walk = walkPageSql(filter, page);
  const readWalk = (transaction?: Transaction) =>
    sequelize.query<LogSummaryRow>(walk.sql, { type: QueryTypes.SELECT, replacements: walk.replacements, transaction });
  const walked = async () => answer(await readNewestFirst(sequelize, readWalk));
  const tagSearch = tagSearchOf(filter);
  if (tagSearch) {
    const tagWalk = tagWalkPageSql(tagSearch, page);
    const rows = await readNewestFirst(sequelize, (transaction) =>
      sequelize.query<LogSummaryRow>(tagWalk.sql, {
        type: QueryTypes.SELECT,
        replacements: tagWalk.replacements,
        transaction,
      }),
    );
    return answer(rows);
  }
  // The list and a status search walk an index in the page's order. Even the bare list, which has
  // one such index: for a deep page (OFFSET 9,900) of a partition whose statistics lagged, the
  // planner preferred a scan and a sort of the tenant's million rows (2.6 s, bench:scale).
  if (!keyFirst) return walked();
  const matched = await candidatePage(keyFirst);
  if (matched.candidates <= KEY_FIRST_CAP) return answer(matched.rows);
  return walked();
}

/**
 * Planner cost above which meta.total is not counted: the planner's estimate answers instead. Measured
 * with 10,000,000 logs in a tenant (bench:scale): the bounded counts of a page-1 list, a status or a
 * recipient search cost 290–1,500 and ran in 1–10 ms; a tag search, when it could only intersect the
 * tag's GIN bitmap with the time range's (before migration 0430), cost 15,000–24,000 and ran in
 * 40–160 ms, more than its page.
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

/** The count of at most bound + 1 matches: of a tag's entries (with their logs when a status is asked), else of logs. */
function boundedCountSql(filter: LogFilter, bound: number): Clause {
  const tagSearch = tagSearchOf(filter);
  if (tagSearch) {
    const entries = tagEntriesOf(tagSearch, null);
    // Without a status every entry is a match: a log and its tags are written and deleted together.
    const probe = filter.status ? tagProbeOf(filter, '1') : null;
    const join = probe ? ` CROSS JOIN LATERAL (${probe.sql}) AS found` : '';
    return {
      sql: `SELECT count(*)::int AS n FROM (SELECT 1 FROM (${entries.sql}) AS entry${join} LIMIT :bound) AS bounded`,
      replacements: { ...entries.replacements, ...probe?.replacements, bound: bound + 1 },
    };
  }
  const where = whereOf(filter);
  const source = sourceOf(filter);
  return {
    sql: `SELECT count(*)::int AS n FROM (SELECT 1 FROM ${source.sql} WHERE ${where.sql} LIMIT :bound) AS bounded`,
    replacements: { ...source.replacements, ...where.replacements, bound: bound + 1 },
  };
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
  const { sql: countSql, replacements } = boundedCountSql(filter, bound);
  const count = async (transaction?: Transaction) => {
    const [explained] = await sequelize.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${countSql}`, {
      type: QueryTypes.SELECT,
      replacements,
      transaction,
    });
    const json = explained['QUERY PLAN'];
    const plan = ((typeof json === 'string' ? JSON.parse(json) : json) as [{ Plan: PlanNode }])[0].Plan;
    const estimated = Math.round(estimatedMatches(plan));
    if (plan['Total Cost'] > costBound) return { total: estimated, estimate: true };
    const [counted] = await sequelize.query<{ n: number }>(countSql, {
      type: QueryTypes.SELECT,
      replacements,
      transaction,
    });
    if (counted.n <= bound) return { total: counted.n, estimate: false };
    // Never below what was just counted: the estimate only ever says "at least this many, about".
    return { total: Math.max(estimated, counted.n), estimate: true };
  };
  if (keyOf(filter)) return count();
  // Without a key the count walks an index and stops at its LIMIT. A bitmap scan, which the planner
  // takes when it expects few rows (a partition without statistics), collects the whole tenant's
  // entries before the first row: 375 ms to count 1,001 of a million logs written through the API.
  return readNewestFirst(sequelize, count);
}
