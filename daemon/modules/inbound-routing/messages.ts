// The messages inbound routes took (issue 52): search, detail, raw source, replay (a webhook route's
// event again for its current endpoint, a forward route's forward queued again). No HTTP.
// The raw source is stored gzipped (compressed in the reader thread); it is inflated for the API by
// zlib's thread pool, not on the event loop.
import { gunzip } from 'node:zlib';
import { promisify } from 'node:util';
import type { Sequelize } from 'sequelize';
import type { TenantContext } from '../../context.ts';
import { ConflictError, NotFoundError } from '../../errors.ts';
import { decodeKeysetCursor, encodeKeysetCursor } from '../../db/keyset.ts';
import type {
  InboundMessageDetail,
  InboundMessagesPage,
  InboundMessagesQuery,
  InboundMessageSummary,
  InboundReplayAnswer,
} from '../../../shared/schemas/inbound.ts';
import type { InboundParsedMessage } from '../../../shared/schemas/inbound-message.ts';
import { emitEventToEndpoint } from '../webhooks/events.ts';
import { inboundEventBodyData } from '../webhooks/sql/inbound-body.ts';
import {
  eventDataOf,
  listMessageRows,
  messageRow,
  rawGzipOf,
  setMessageStatus,
  type InboundMessageRow,
} from './sql/messages.ts';
import { routeRow } from './sql/routes.ts';
import { forwardInbound, type ForwardDeps } from './forward.ts';
import { recordedEventData } from './receive.ts';

const inflate = promisify(gunzip);
const iso = (date: Date | string) => new Date(date).toISOString();

export interface InboundMessagesDeps {
  db: { sequelize: Sequelize };
}

export function toMessageSummary(row: InboundMessageRow): InboundMessageSummary {
  return {
    id: row.id,
    routeId: row.route_id,
    status: row.status,
    mailFrom: row.mail_from,
    recipient: row.recipient,
    mailboxHash: row.mailbox_hash,
    clientIp: row.client_ip,
    from: row.from_address,
    subject: row.subject,
    messageId: row.message_id,
    size: row.size,
    inReplyTo:
      row.reply_email_id && row.reply_message_id
        ? { emailId: row.reply_email_id, messageId: row.reply_message_id }
        : null,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

export async function listMessages(
  deps: InboundMessagesDeps,
  ctx: TenantContext,
  query: InboundMessagesQuery,
): Promise<InboundMessagesPage> {
  const limit = query.limit ?? 20;
  const rows = await listMessageRows(deps.db.sequelize, ctx.tenantId, {
    ...query,
    before: query.cursor ? decodeKeysetCursor(query.cursor) : undefined,
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    data: page.map(toMessageSummary),
    meta: {
      limit,
      nextCursor: rows.length > limit ? encodeKeysetCursor({ at: last.created_at_text, id: last.id }) : null,
    },
  };
}

export async function getMessage(
  deps: InboundMessagesDeps,
  ctx: TenantContext,
  id: string,
): Promise<InboundMessageDetail> {
  const row = await messageRow(deps.db.sequelize, ctx.tenantId, id);
  if (!row) throw new NotFoundError('Inbound message');
  return { ...toMessageSummary(row), parsed: row.parsed as unknown as InboundParsedMessage, error: row.error };
}

/** The source as stored (our Authentication-Results on top, forged ones of ours removed). */
export async function rawMessage(deps: InboundMessagesDeps, ctx: TenantContext, id: string): Promise<Buffer> {
  const gzipped = await rawGzipOf(deps.db.sequelize, ctx.tenantId, id);
  if (!gzipped) throw new NotFoundError('Inbound message');
  return inflate(gzipped);
}

/**
 * Delivers the message again by its route's current action: a webhook route gets a new
 * `inbound.received` event (the original body's data while the delivery log keeps it, else the original
 * event's, else rebuilt from the stored parse, without inline contents) for its current endpoint;
 * a forward route forwards again. A store route, or a route since removed, has nothing to replay (409).
 */
export async function replayMessage(
  deps: InboundMessagesDeps & Pick<ForwardDeps, 'config' | 'secrets'>,
  ctx: TenantContext,
  id: string,
): Promise<InboundReplayAnswer> {
  const { sequelize } = deps.db;
  const message = await messageRow(sequelize, ctx.tenantId, id);
  if (!message) throw new NotFoundError('Inbound message');
  const route = message.route_id ? await routeRow(sequelize, ctx.tenantId, message.route_id) : null;
  if (!route)
    throw new ConflictError('The route that took this message was removed: there is nothing to replay it to.');
  if (route.action === 'forward' && route.forward_to) {
    const to = route.forward_to;
    const rawGzip = (await rawGzipOf(sequelize, ctx.tenantId, id))!;
    await sequelize.transaction(async (transaction) => {
      await forwardInbound(
        { sequelize, config: deps.config, secrets: deps.secrets },
        { tenantId: ctx.tenantId },
        { inboundId: id, to, rawGzip, mailFrom: message.mail_from },
        transaction,
      );
      await setMessageStatus(sequelize, { tenantId: ctx.tenantId, id }, { status: 'forwarded' }, transaction);
    });
    return { id, status: 'forwarded', eventId: null };
  }
  if (route.action !== 'webhook' || !route.endpoint_id)
    throw new ConflictError(`The message's route (${route.action}) has no endpoint to replay it to.`);
  const endpointId = route.endpoint_id;
  // The body as delivered (inline contents included), stored once in its delivery; once the delivery
  // log dropped it, the event row's (contents left out); once that is gone too, rebuilt from the parse.
  const original = message.event_id
    ? ((await inboundEventBodyData(sequelize, ctx.tenantId, message.event_id)) ??
      (await eventDataOf(sequelize, ctx.tenantId, message.event_id)))
    : null;
  const data = original ?? {
    ...message.parsed,
    inboundId: id,
    routeId: route.id,
    mailFrom: message.mail_from,
    recipient: message.recipient,
    mailboxHash: message.mailbox_hash,
    inReplyTo: toMessageSummary(message).inReplyTo,
    inReplyToHeader: (message.parsed as { inReplyTo?: string | null }).inReplyTo ?? null,
  };
  const eventId = await sequelize.transaction(async (transaction) => {
    const emitted = await emitEventToEndpoint(
      sequelize,
      {
        tenantId: ctx.tenantId,
        type: 'inbound.received',
        data: { ...data, replayOf: message.event_id },
        recorded: { ...recordedEventData(data), replayOf: message.event_id },
      },
      endpointId,
      transaction,
    );
    await setMessageStatus(
      sequelize,
      { tenantId: ctx.tenantId, id },
      { status: 'received', eventId: emitted },
      transaction,
    );
    return emitted;
  });
  return { id, status: 'received', eventId };
}
