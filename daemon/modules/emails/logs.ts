// Reading the email logs of a tenant, and resending one (a new send through the whole pipeline).
import { Op, QueryTypes, type WhereOptions } from 'sequelize';
import { NotFoundError } from '../../errors.ts';
import type { TenantContext } from '../../plugins/access.ts';
import type { EmailLogDetail, EmailLogSummary } from '../../../shared/schemas/emails.ts';
import { EmailEvent, EmailLog } from './model.ts';
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
  since?: string;
  until?: string;
  tag?: string;
}

export async function listEmailLogs(ctx: TenantContext, filters: LogFilters) {
  const page = filters.page ?? 1;
  const limit = filters.limit ?? 20;
  const where: Record<string | symbol, unknown> = { tenantId: ctx.tenantId };
  if (filters.status) where.status = filters.status;
  if (filters.tag) where.tags = { [Op.contains]: [filters.tag] };
  const created: Record<symbol, Date> = {};
  if (filters.since) created[Op.gte] = new Date(filters.since);
  if (filters.until) created[Op.lt] = new Date(filters.until);
  if (filters.since || filters.until) where.createdAt = created;
  if (filters.to) {
    // Matches the bare address inside "Name <address>" entries too.
    const needle = filters.to.toLowerCase().replace(/[%_\\]/g, '\\$&');
    where[Op.and] = [EmailLog.sequelize!.literal(`EXISTS (SELECT 1 FROM unnest("EmailLog"."to_addresses") AS a WHERE lower(a) = ${EmailLog.sequelize!.escape(needle)} OR lower(a) LIKE ${EmailLog.sequelize!.escape(`%<${needle}>`)})`)];
  }
  const { rows, count } = await EmailLog.findAndCountAll({
    where: where as WhereOptions<EmailLog>,
    attributes: { exclude: ['htmlBody', 'textBody', 'attachments', 'data'] },
    order: [['createdAt', 'DESC'], ['id', 'DESC']],
    limit,
    offset: (page - 1) * limit,
  });
  return { data: rows.map(summary), meta: { page, limit, total: count, totalPages: Math.ceil(count / limit) } };
}

async function ownedLog(ctx: TenantContext, id: string): Promise<EmailLog> {
  const log = await EmailLog.findOne({ where: { id, tenantId: ctx.tenantId } });
  if (!log) throw new NotFoundError('The email log');
  return log;
}

export async function getEmailLog(ctx: TenantContext, id: string): Promise<EmailLogDetail> {
  const log = await ownedLog(ctx, id);
  const [events, captured] = await Promise.all([
    EmailEvent.findAll({ where: { emailId: log.id, tenantId: ctx.tenantId }, order: [['createdAt', 'ASC']] }),
    EmailLog.sequelize!.query<{ raw: string }>(`SELECT raw FROM captured_messages WHERE email_id = :id ORDER BY created_at DESC LIMIT 1`, {
      replacements: { id: log.id },
      type: QueryTypes.SELECT,
    }),
  ]);
  return {
    ...summary(log),
    bcc: log.bccAddresses,
    replyTo: log.replyTo,
    bodyHtml: log.htmlBody ?? null,
    bodyText: log.textBody ?? null,
    headers: log.sentHeaders ?? log.headers,
    metadata: log.metadata,
    attachments: log.attachments.map((a) => ({ filename: a.filename, contentType: a.contentType ?? 'application/octet-stream', size: a.size })),
    trackOpens: log.trackOpens,
    trackClicks: log.trackClicks,
    smtpResponse: log.smtpResponse ?? null,
    resentFrom: log.resentFrom ?? null,
    events: events.map((e) => ({ type: e.type, data: e.data, createdAt: e.createdAt.toISOString() })),
    raw: captured[0]?.raw ?? null,
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

export async function resendEmailLog(deps: SendDeps, ctx: TenantContext, id: string): Promise<SendAnswer> {
  const log = await ownedLog(ctx, id);
  return acceptSends(deps, ctx, [sendOfLog(log)], { shape: 'single' });
}
