// Reading the email logs of a tenant, and resending one (a new send through the whole pipeline).
import { Op, QueryTypes, type Sequelize } from 'sequelize';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.ts';
import { decodeKeysetCursor, encodeKeysetCursor } from '../../db/keyset.ts';
import type { TenantContext } from '../../context.ts';
import type { AppDeps } from '../../app-types.ts';
import {
  EXACT_LOG_TOTAL,
  MAX_LOG_OFFSET,
  type EmailLogDetail,
  type EmailReply,
  type EmailLogSummary,
  type LogsPage,
} from '../../../shared/schemas/emails.ts';
import { countLogs, findLogPage, type LogFilter, type PageWindow } from './sql/log-search.ts';
import { logSummaryOfRow } from './sql/log-columns.ts';
import { waitingEmails } from '../../mta/sql/spool-waits.ts';
import type { EmailLog } from './model.ts';
import { modelsOf } from '../models.ts';
import { findTenantLog, sameTenant } from './sql/log-records.ts';
import { acceptSends, type SendAnswer, type SendDeps } from './service.ts';
import type { NormalizedSend } from './validate.ts';
import type { EmailStatus } from '../../../shared/constants.ts';

function summary(log: EmailLog): EmailLogSummary {
  return {
    id: log.id,
    status: log.status,
    messageId: log.messageId,
    from: log.fromAddress,
    to: log.toAddresses,
    cc: log.ccAddresses,
    subject: log.subject,
    tags: log.tags,
    projectId: log.projectId ?? null,
    templateVersionId: log.templateVersionId ?? null,
    captured: log.captured,
    testMode: log.testMode,
    attempts: log.attempts,
    error: log.error ?? null,
    sentAt: log.sentAt ? log.sentAt.toISOString() : null,
    createdAt: log.createdAt.toISOString(),
  };
}

export interface LogFilters {
  page?: number;
  limit?: number;
  status?: EmailStatus;
  to?: string;
  messageId?: string;
  since?: string;
  until?: string;
  tag?: string;
  cursor?: string;
}

/**
 * A message id names one log, or the few that share it: the page's own statement finds every match,
 * and when the page ends the results their number is the total. The count (an EXPLAIN, then the
 * bounded count: two more statements, each planned over every partition) runs only when it does not.
 */
async function pageThenCount(
  sequelize: Sequelize,
  filter: LogFilter,
  page: PageWindow,
): Promise<[{ total: number; estimate: boolean }, Awaited<ReturnType<typeof findLogPage>>]> {
  const found = await findLogPage(sequelize, filter, page);
  const endsResults = !found.hasMore && !page.after && (found.rows.length > 0 || page.offset === 0);
  if (endsResults) return [{ total: page.offset + found.rows.length, estimate: false }, found];
  return [await countLogs(sequelize, filter, EXACT_LOG_TOTAL), found];
}

/**
 * A page of logs, newest first. `meta.total` is exact up to EXACT_LOG_TOTAL matches when counting
 * them is cheap (sql/log-search.ts, COUNT_COST_BOUND) and an estimate otherwise (meta.totalIsEstimate),
 * exact again on a page that ends the results, so page 1 never counts a whole history. page × limit
 * stops at MAX_LOG_OFFSET (an OFFSET reads and throws away every row before the page); deeper
 * reading follows meta.nextCursor, which costs the same at any depth.
 */
export async function listEmailLogs(deps: LogDeps, ctx: TenantContext, filters: LogFilters): Promise<LogsPage> {
  const { sequelize } = deps.db;
  const page = filters.page ?? 1;
  const limit = filters.limit ?? 20;
  const after = filters.cursor !== undefined ? decodeKeysetCursor(filters.cursor) : null;
  if (!after && page * limit > MAX_LOG_OFFSET) {
    throw new ValidationError(
      `Pages reach the first ${MAX_LOG_OFFSET} logs; read further with cursor (meta.nextCursor of the previous page).`,
      [{ field: 'querystring.page', message: `page × limit must be at most ${MAX_LOG_OFFSET}; use cursor` }],
    );
  }
  const filter = {
    tenantId: ctx.tenantId,
    status: filters.status,
    to: filters.to,
    messageId: filters.messageId,
    tag: filters.tag,
    since: filters.since ? new Date(filters.since) : undefined,
    until: filters.until ? new Date(filters.until) : undefined,
  };
  const offset = after ? 0 : (page - 1) * limit;
  const [counted, found] = filter.messageId
    ? await pageThenCount(sequelize, filter, { limit, offset, after })
    : await Promise.all([
        countLogs(sequelize, filter, EXACT_LOG_TOTAL),
        findLogPage(sequelize, filter, { limit, offset, after }),
      ]);
  const last = found.rows.at(-1);
  const total = counted.estimate ? pagedTotal(counted.total, after ? null : offset, found) : counted;
  // Sends not past QUEUED/SENDING may be held by a wait of ours: said beside the status.
  const waits = await waitingEmails(
    deps.db.sql,
    ctx.tenantId,
    found.rows.filter((row) => row.status === 'QUEUED' || row.status === 'SENDING').map((row) => row.id),
  );
  return {
    data: found.rows.map((row) => {
      const wait = waits.get(row.id);
      return {
        ...logSummaryOfRow(row),
        ...(wait ? { waiting: { kind: wait.kind, reason: wait.reason, until: wait.until.toISOString() } } : {}),
      };
    }),
    meta: {
      page: after ? 1 : page,
      limit,
      total: total.total,
      totalPages: Math.ceil(total.total / limit),
      totalIsEstimate: total.estimate,
      nextCursor: found.hasMore && last ? encodeKeysetCursor({ at: last.position, id: last.id }) : null,
    },
  };
}

/**
 * An estimated total set against what the page itself shows: a numbered page that ends the results
 * gives the exact total, and a total is never below the logs already seen.
 */
export function pagedTotal(
  estimated: number,
  offset: number | null,
  found: { rows: unknown[]; hasMore: boolean },
): { total: number; estimate: boolean } {
  if (offset === null || (found.rows.length === 0 && offset > 0))
    return { total: Math.max(estimated, found.rows.length), estimate: true };
  const seen = offset + found.rows.length;
  if (!found.hasMore) return { total: seen, estimate: false };
  return { total: Math.max(estimated, seen + 1), estimate: true };
}

/** What the log readers take: the connection their models are bound to. */
export type LogDeps = Pick<AppDeps, 'db'>;

async function ownedLog(
  deps: { db: Pick<LogDeps['db'], 'sequelize'> },
  ctx: TenantContext,
  id: string,
): Promise<EmailLog> {
  const log = await findTenantLog(deps.db.sequelize, ctx.tenantId, id);
  if (!log) throw new NotFoundError('The email log');
  return log;
}

export async function getEmailLog(deps: LogDeps, ctx: TenantContext, input: { id: string }): Promise<EmailLogDetail> {
  const { id } = input;
  const log = await ownedLog(deps, ctx, id);
  const [events, captured] = await Promise.all([
    modelsOf(deps.db.sequelize).EmailEvent.findAll({
      where: { emailId: log.id, [Op.and]: [sameTenant(ctx.tenantId)] },
      order: [['createdAt', 'ASC']],
    }),
    deps.db.sequelize.query<{ raw: string }>(
      `SELECT raw FROM captured_messages WHERE email_id = :id AND tenant_id = :tenantId ORDER BY created_at DESC LIMIT 1`,
      {
        replacements: { id: log.id, tenantId: ctx.tenantId },
        type: QueryTypes.SELECT,
      },
    ),
  ]);
  return {
    ...summary(log),
    bcc: log.bccAddresses,
    replyTo: log.replyTo,
    bodyHtml: log.htmlBody ?? null,
    bodyText: log.textBody ?? null,
    headers: log.sentHeaders ?? log.headers,
    metadata: log.metadata,
    attachments: log.attachments.map((a) => ({
      filename: a.filename,
      contentType: a.contentType ?? 'application/octet-stream',
      size: a.size,
    })),
    trackOpens: log.trackOpens,
    trackClicks: log.trackClicks,
    smtpResponse: log.smtpResponse ?? null,
    resentFrom: log.resentFrom ?? null,
    bodiesRemovedAt: log.bodiesRemovedAt ? log.bodiesRemovedAt.toISOString() : null,
    events: events.map((e) => ({ type: e.type, data: e.data, createdAt: e.createdAt.toISOString() })),
    // The `replied` rows inbound-routing/reply-link.ts records, each naming its inbound message.
    replies: events.flatMap((e) => (e.type === 'replied' ? [e.data.reply as EmailReply] : [])),
    waiting: waitingOf(log.status, events),
    raw: captured[0]?.raw ?? null,
  };
}

/**
 * A wait of ours (the MTA's `waiting` row: warm-up) still in force: the log is not past QUEUED and no
 * attempt or outcome came after the row.
 */
function waitingOf(
  status: string,
  events: Array<{ type: string; data: Record<string, unknown> }>,
): EmailLogDetail['waiting'] {
  if (status !== 'QUEUED' && status !== 'SENDING') return null;
  const last = events.findLast((e) => ['waiting', 'deferred', 'delivered', 'bounced', 'sent'].includes(e.type));
  if (last?.type !== 'waiting') return null;
  return {
    kind: String(last.data.kind ?? 'warmup'),
    reason: String(last.data.reason ?? ''),
    until: typeof last.data.until === 'string' ? last.data.until : null,
  };
}

/** The request a log was accepted from, for a resend. */
export function sendOfLog(log: EmailLog): NormalizedSend {
  return {
    from: log.fromAddress,
    fromAddress: (log.fromAddress.match(/<([^>]+)>\s*$/)?.[1] ?? log.fromAddress).toLowerCase(),
    to: log.toAddresses,
    cc: log.ccAddresses,
    bcc: log.bccAddresses,
    replyTo: log.replyTo,
    subject: log.subject,
    htmlBody: log.templateVersionId ? null : log.htmlBody,
    textBody: log.templateVersionId ? null : log.textBody,
    templateVersionId: log.templateVersionId ?? null,
    data: log.data ?? null,
    locale: log.locale ?? null,
    headers: log.headers,
    tags: log.tags,
    metadata: log.metadata,
    attachments: log.attachments,
    projectId: log.projectId ?? null,
    trackOpens: log.trackOpens,
    trackClicks: log.trackClicks,
    resentFrom: log.id,
  };
}

export async function resendEmailLog(deps: SendDeps, ctx: TenantContext, input: { id: string }): Promise<SendAnswer> {
  const { id } = input;
  const log = await ownedLog(deps, ctx, id);
  if (log.bodiesRemovedAt) {
    throw new ConflictError(
      'The bodies of this email were removed by the retention policy: it cannot be resent.',
      'BODIES_EXPIRED',
    );
  }
  return acceptSends(deps, ctx, { sends: [sendOfLog(log)], shape: 'single' });
}
