// The SQL of inbound messages (issue 52): the row written per routed recipient before the SMTP 250,
// the searches of GET /inbound/messages (keyset on created_at, id, newest first), the raw source and
// the status changes of store, forward and replay. The webhook's own outcome reaches the status
// through a trigger on its delivery (migration 0472). Every read is filtered by tenant.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { declare, sequelizeRows } from '../../../db/sql.ts';
import type { InboundMessageStatus } from '../../../../shared/schemas/inbound.ts';

export interface NewInboundMessage {
  /** Also the created_at of its stored attachments (the retention task deletes them by it). */
  createdAt: Date;
  tenantId: string;
  /** null: a reply address no route took (stored). */
  routeId: string | null;
  action: string;
  status: InboundMessageStatus;
  mailFrom: string | null;
  recipient: string;
  mailboxHash: string | null;
  clientIp: string | null;
  fromAddress: string | null;
  subject: string | null;
  messageId: string | null;
  size: number;
  rawGzip: Uint8Array;
  parsed: object;
  replyEmailId: string | null;
  replyMessageId: string | null;
  eventId: string | null;
}

const INSERT = declare(
  'inbound.insert-message',
  `INSERT INTO inbound_messages (id, tenant_id, route_id, action, status, mail_from, recipient, mailbox_hash, client_ip,
     from_address, subject, message_id, size, raw_gzip, parsed, reply_email_id, reply_message_id, event_id, created_at, updated_at)
   VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15::jsonb, $16, $17, $18, $19, $19)
   RETURNING id, created_at`,
);

export async function insertInboundMessage(
  sequelize: Sequelize,
  id: string,
  row: NewInboundMessage,
  transaction: Transaction,
): Promise<{ id: string; created_at: Date }> {
  const [inserted] = await sequelizeRows<{ id: string; created_at: Date }>(
    sequelize,
    INSERT,
    [
      id,
      row.tenantId,
      row.routeId,
      row.action,
      row.status,
      row.mailFrom,
      row.recipient,
      row.mailboxHash,
      row.clientIp,
      row.fromAddress,
      row.subject,
      row.messageId,
      row.size,
      Buffer.from(row.rawGzip.buffer, row.rawGzip.byteOffset, row.rawGzip.byteLength),
      JSON.stringify(row.parsed),
      row.replyEmailId,
      row.replyMessageId,
      row.eventId,
      row.createdAt,
    ],
    transaction,
  );
  return inserted;
}

const INSERT_ATTACHMENT = declare(
  'inbound.insert-attachment',
  `INSERT INTO inbound_attachments (id, created_at, tenant_id, inbound_id, sha256, content) VALUES ($1, $2, $3, $4, $5, $6)`,
);

export async function insertInboundAttachment(
  sequelize: Sequelize,
  row: { id: string; createdAt: Date; tenantId: string; inboundId: string; sha256: string; content: Uint8Array },
  transaction: Transaction,
): Promise<void> {
  await sequelizeRows(
    sequelize,
    INSERT_ATTACHMENT,
    [
      row.id,
      row.createdAt,
      row.tenantId,
      row.inboundId,
      row.sha256,
      Buffer.from(row.content.buffer, row.content.byteOffset, row.content.byteLength),
    ],
    transaction,
  );
}

export async function attachmentContent(
  sequelize: Sequelize,
  key: { tenantId: string; attachmentId: string },
): Promise<Buffer | null> {
  const [row] = await sequelize.query<{ content: Buffer }>(
    `SELECT content FROM inbound_attachments WHERE tenant_id = :tenantId AND id = :attachmentId`,
    { type: QueryTypes.SELECT, replacements: key },
  );
  return row?.content ?? null;
}

export interface InboundMessageRow {
  id: string;
  tenant_id: string;
  route_id: string | null;
  action: string;
  status: InboundMessageStatus;
  mail_from: string | null;
  recipient: string;
  mailbox_hash: string | null;
  client_ip: string | null;
  from_address: string | null;
  subject: string | null;
  message_id: string | null;
  size: number;
  reply_email_id: string | null;
  reply_message_id: string | null;
  event_id: string | null;
  error: string | null;
  /** As PostgreSQL prints it: the keyset cursor keeps its microseconds. */
  created_at_text: string;
  created_at: Date;
  updated_at: Date;
}

const SUMMARY = `id, tenant_id, route_id, action, status, mail_from, recipient, mailbox_hash, client_ip, from_address, subject,
  message_id, size, reply_email_id, reply_message_id, event_id, error, created_at::text AS created_at_text, created_at, updated_at`;

export interface MessageFilters {
  from?: string;
  to?: string;
  subject?: string;
  since?: string;
  until?: string;
  routeId?: string;
  status?: string;
  before?: { at: string; id: string };
  limit: number;
}

/** `%`, `_` and `\` taken literally in an ILIKE pattern. */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

export async function listMessageRows(
  sequelize: Sequelize,
  tenantId: string,
  f: MessageFilters,
): Promise<InboundMessageRow[]> {
  const where = ['tenant_id = :tenantId'];
  if (f.from) where.push(`(mail_from ILIKE :from OR from_address ILIKE :from)`);
  if (f.to) where.push(`lower(recipient) = lower(:to)`);
  if (f.subject) where.push(`subject ILIKE :subject`);
  if (f.since) where.push(`created_at >= CAST(:since AS timestamptz)`);
  if (f.until) where.push(`created_at < CAST(:until AS timestamptz)`);
  if (f.routeId) where.push(`route_id = :routeId`);
  if (f.status) where.push(`status = :status`);
  if (f.before) where.push(`(created_at, id) < (CAST(:beforeAt AS timestamptz), CAST(:beforeId AS uuid))`);
  return sequelize.query<InboundMessageRow>(
    `SELECT ${SUMMARY} FROM inbound_messages WHERE ${where.join(' AND ')}
      ORDER BY created_at DESC, id DESC LIMIT :limit`,
    {
      type: QueryTypes.SELECT,
      replacements: {
        tenantId,
        from: f.from ? `%${likeLiteral(f.from)}%` : null,
        to: f.to ?? null,
        subject: f.subject ? `%${likeLiteral(f.subject)}%` : null,
        since: f.since ?? null,
        until: f.until ?? null,
        routeId: f.routeId ?? null,
        status: f.status ?? null,
        beforeAt: f.before?.at ?? null,
        beforeId: f.before?.id ?? null,
        limit: f.limit,
      },
    },
  );
}

export async function messageRow(
  sequelize: Sequelize,
  tenantId: string,
  id: string,
  transaction?: Transaction,
): Promise<(InboundMessageRow & { parsed: Record<string, unknown> }) | null> {
  const [row] = await sequelize.query<InboundMessageRow & { parsed: Record<string, unknown> }>(
    `SELECT ${SUMMARY}, parsed FROM inbound_messages WHERE tenant_id = :tenantId AND id = :id
     ${transaction ? 'FOR UPDATE' : ''}`,
    { type: QueryTypes.SELECT, replacements: { tenantId, id }, transaction },
  );
  return row ?? null;
}

const RAW = declare('inbound.raw', `SELECT raw_gzip FROM inbound_messages WHERE tenant_id = $1 AND id = $2`);

export async function rawGzipOf(sequelize: Sequelize, tenantId: string, id: string): Promise<Buffer | null> {
  const [row] = await sequelizeRows<{ raw_gzip: Buffer }>(sequelize, RAW, [tenantId, id]);
  return row?.raw_gzip ?? null;
}

/** A new status (store, forward, replay), and the event a replay delivers. */
export async function setMessageStatus(
  sequelize: Sequelize,
  key: { tenantId: string; id: string },
  change: { status: InboundMessageStatus; error?: string | null; eventId?: string | null },
  transaction?: Transaction,
): Promise<void> {
  await sequelize.query(
    `UPDATE inbound_messages
        SET status = :status, error = :error, updated_at = now(),
            event_id = CASE WHEN :setEvent THEN CAST(:eventId AS uuid) ELSE event_id END
      WHERE tenant_id = :tenantId AND id = :id`,
    {
      replacements: {
        ...key,
        status: change.status,
        error: change.error ?? null,
        setEvent: change.eventId !== undefined,
        eventId: change.eventId ?? null,
      },
      transaction,
    },
  );
}

/** The data of the event a webhook message was delivered with, while the events history keeps it. */
export async function eventDataOf(
  sequelize: Sequelize,
  tenantId: string,
  eventId: string,
): Promise<Record<string, unknown> | null> {
  const [row] = await sequelize.query<{ data: Record<string, unknown> }>(
    `SELECT data FROM events WHERE tenant_id = :tenantId AND id = :eventId`,
    { type: QueryTypes.SELECT, replacements: { tenantId, eventId } },
  );
  return row?.data ?? null;
}
