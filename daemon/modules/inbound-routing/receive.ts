// A routed message after DATA (docs/inbound.md "Storing and delivering"): before the SMTP 250, one
// inbound_messages row per routed recipient, with the gzipped source, and for a webhook route the
// `inbound.received` event and its delivery row for the route's endpoint (the webhook outbox), all in
// ONE transaction. A crash after the 250 loses nothing: the rows are committed and the webhook worker
// delivers (and retries) from them; a crash before it leaves nothing and the sender retries on its
// 451. Messages read while another's transaction is in flight share the next one (createRoutedStore,
// daemon/db/group-commit.ts): each still gets its 250 only once the transaction holding its rows has
// committed. A forward route's message is queued for sending in that same transaction (forward.ts, the
// durable system-mail queue). Attachments larger than the route's inline size are stored beside the message and named by a
// signed URL valid ATTACHMENT_URL_TTL_S. Knows no SMTP.
import { randomUUID } from 'node:crypto';
import type { Sequelize, Transaction } from 'sequelize';
import { createGroupCommit } from '../../db/group-commit.ts';
import type { Config } from '../../config.ts';
import type { Secrets } from '../../secrets.ts';
import type { InboundAttachment, InboundParsedMessage } from '../../../shared/schemas/inbound-message.ts';
import type { InboundEventEnvelope, InboundMessageStatus } from '../../../shared/schemas/inbound.ts';
import { emitEventToEndpoint } from '../webhooks/events.ts';
import { signLinkToken } from '../../mail/link-tokens.ts';
import type { RoutedRead } from './parse.ts';
import type { RoutedRecipient } from './matching.ts';
import { insertInboundAttachment, insertInboundMessage } from './sql/messages.ts';
import { linkReply, recordReply } from './reply-link.ts';
import { forwardInbound } from './forward.ts';

/** How long the URL of a large attachment opens it. */
export const ATTACHMENT_URL_TTL_S = 24 * 60 * 60;

export interface ReceiveDeps {
  sequelize: Sequelize;
  config: Config;
  secrets: Pick<Secrets, 'linkSigningKey' | 'encryptionKey'>;
}

export interface RoutedEnvelope {
  mailFrom: string | null;
  clientIp: string | null;
  /** Bytes of the message as it arrived. */
  size: number;
}

export interface StoredInbound {
  id: string;
  tenantId: string;
  recipient: RoutedRecipient;
  status: InboundMessageStatus;
  eventId: string | null;
}

/** The public URL of a stored attachment (routes.ts serves it), signed with the link key. */
export function attachmentUrl(
  deps: Pick<ReceiveDeps, 'config' | 'secrets'>,
  tenantId: string,
  attachmentId: string,
  nowMs = Date.now(),
): string {
  const token = signLinkToken(deps.secrets.linkSigningKey, {
    k: 'a',
    t: tenantId,
    i: attachmentId,
    x: Math.floor(nowMs / 1000) + ATTACHMENT_URL_TTL_S,
  });
  return `${deps.config.publicUrl.replace(/\/$/, '')}/inbound/attachments/${token}`;
}

/** Attachments without content: what is stored in `parsed` (the source keeps the bytes). */
function withoutContent(parsed: InboundParsedMessage): InboundParsedMessage {
  return { ...parsed, attachments: parsed.attachments.map(({ content: _content, url: _url, ...meta }) => meta) };
}

/**
 * An inbound.received event's data as its row keeps it: the attachments' inline contents are stored once,
 * in the delivery's payload (and the source); replay reads them back from there (messages.ts).
 */
export function recordedEventData<T extends { attachments?: unknown }>(data: T): T {
  if (!Array.isArray(data.attachments)) return data;
  const attachments = (data.attachments as InboundAttachment[]).map(({ content: _content, ...meta }) => meta);
  return { ...data, attachments };
}

function statusOf(recipient: RoutedRecipient): InboundMessageStatus {
  // A reply address no route takes: stored for the API (reply-address.ts).
  if (!recipient.route) return 'stored';
  switch (recipient.route.action) {
    case 'webhook':
      return recipient.route.endpoint_id ? 'received' : 'stored';
    case 'store':
      return 'stored';
    case 'forward':
      // Queued for sending in the transaction that stores it (forward.ts).
      return 'forwarded';
    case 'refuse':
      // Refused at RCPT TO: never stored.
      return 'received';
  }
}

/**
 * Stores the message for each routed recipient and queues its webhooks, in one transaction; a reply
 * to a send of the recipient's tenant is linked there too (`email.replied` on the send, reply-link.ts):
 * looked up once per tenant, recorded once per tenant (on its first stored row), whatever number of
 * its addresses the message was sent to; every row of the tenant carries the link.
 */
export async function storeRoutedMessage(
  deps: ReceiveDeps,
  envelope: RoutedEnvelope,
  recipients: RoutedRecipient[],
  read: RoutedRead,
): Promise<StoredInbound[]> {
  return deps.sequelize.transaction((transaction) => storeIn(deps, envelope, recipients, read, transaction));
}

/** A message's rows, in the caller's transaction (storeRoutedMessage's, or a group's). */
async function storeIn(
  deps: ReceiveDeps,
  envelope: RoutedEnvelope,
  recipients: RoutedRecipient[],
  read: RoutedRead,
  transaction: Transaction,
): Promise<StoredInbound[]> {
  const parsed = read.parsed;
  const contentOf = new Map(read.attachments.map((a) => [a.sha256, a.content]));
  const stored = withoutContent(parsed);
  const done: StoredInbound[] = [];
  const links = new Map<string, Awaited<ReturnType<typeof linkReply>>>();
  // A reply address names its send outright (its tag held at RCPT TO); headers are looked up otherwise.
  for (const { tenantId, repliesTo } of recipients) if (repliesTo) links.set(tenantId, repliesTo);
  for (const { tenantId } of recipients)
    if (!links.has(tenantId)) links.set(tenantId, await linkReply(deps, { tenantId }, parsed, transaction));
  const replied = new Set<string>();
  for (const recipient of recipients) {
    const id = randomUUID();
    const createdAt = new Date();
    const link = links.get(recipient.tenantId) ?? null;
    const status = statusOf(recipient);
    const route = recipient.route;
    let eventId: string | null = null;
    let attachments: InboundAttachment[] = stored.attachments;
    if (route?.action === 'webhook' && route.endpoint_id) {
      // Larger than the route inlines: kept beside the message, named by a signed URL.
      attachments = [];
      for (const meta of stored.attachments) {
        const content = contentOf.get(meta.sha256);
        if (!content) attachments.push(meta);
        else if (meta.size <= route.max_inline_attachment_bytes)
          attachments.push({ ...meta, content: Buffer.from(content).toString('base64') });
        else {
          const attachmentId = randomUUID();
          await insertInboundAttachment(
            deps.sequelize,
            {
              id: attachmentId,
              createdAt,
              tenantId: recipient.tenantId,
              inboundId: id,
              sha256: meta.sha256,
              content,
            },
            transaction,
          );
          attachments.push({ ...meta, url: attachmentUrl(deps, recipient.tenantId, attachmentId) });
        }
      }
      const envelopeData: InboundEventEnvelope = {
        inboundId: id,
        routeId: route.id,
        mailFrom: envelope.mailFrom,
        recipient: recipient.address,
        mailboxHash: recipient.mailboxHash,
        inReplyTo: link,
        inReplyToHeader: parsed.inReplyTo,
      };
      // The body (inline contents and all) is stored once, as the delivery's payload; the event row
      // keeps it without the contents (replay reads the body back: messages.ts replayMessage).
      eventId = await emitEventToEndpoint(
        deps.sequelize,
        {
          tenantId: recipient.tenantId,
          type: 'inbound.received',
          data: { ...stored, attachments, ...envelopeData },
          recorded: recordedEventData({ ...stored, attachments, ...envelopeData }),
        },
        route.endpoint_id,
        transaction,
      );
    }
    await insertInboundMessage(
      deps.sequelize,
      id,
      {
        createdAt,
        tenantId: recipient.tenantId,
        routeId: route?.id ?? null,
        action: route?.action ?? 'store',
        status,
        mailFrom: envelope.mailFrom,
        recipient: recipient.address,
        mailboxHash: recipient.mailboxHash,
        clientIp: envelope.clientIp,
        fromAddress: parsed.from.address || null,
        subject: parsed.subject || null,
        messageId: parsed.messageId,
        size: envelope.size,
        rawGzip: read.rawGzip,
        parsed: stored,
        replyEmailId: link?.emailId ?? null,
        replyMessageId: link?.messageId ?? null,
        eventId,
      },
      transaction,
    );
    if (route?.action === 'forward' && route.forward_to)
      await forwardInbound(
        deps,
        { tenantId: recipient.tenantId },
        { inboundId: id, to: route.forward_to, rawGzip: read.rawGzip, mailFrom: envelope.mailFrom },
        transaction,
      );
    if (link && !replied.has(recipient.tenantId)) {
      replied.add(recipient.tenantId);
      await recordReply(deps, { tenantId: recipient.tenantId, emailId: link.emailId, inboundId: id }, transaction);
    }
    done.push({ id, tenantId: recipient.tenantId, recipient, status, eventId });
  }
  return done;
}

/**
 * The bytes of messages one group transaction holds at most (their gzipped sources and attachments):
 * a message alone past it goes in a transaction of its own.
 */
const GROUP_MAX_BYTES = 4 * 1024 * 1024;

interface StoreJob {
  envelope: RoutedEnvelope;
  recipients: RoutedRecipient[];
  read: RoutedRead;
}

export interface RoutedStore {
  /** storeRoutedMessage, in a transaction it may share with messages read meanwhile; resolves once committed. */
  store(envelope: RoutedEnvelope, recipients: RoutedRecipient[], read: RoutedRead): Promise<StoredInbound[]>;
}

/**
 * Group commit of routed messages (the listener makes one): a message arriving while a store
 * transaction is in flight waits for it and goes with the others that arrived, in one transaction
 * (one BEGIN, one COMMIT, one WAL flush for all); a message alone is stored at once. Each message's
 * promise resolves only after the commit that holds its rows, so its 250 still follows its durable
 * write. When a group's transaction fails, each of its messages is stored again alone, so that one
 * message's failure is its own 451 and costs the others nothing.
 */
export function createRoutedStore(deps: ReceiveDeps): RoutedStore {
  const storeAlone = (job: StoreJob) => storeRoutedMessage(deps, job.envelope, job.recipients, job.read);
  const settled = (jobs: StoreJob[]) =>
    Promise.allSettled(jobs.map(storeAlone)) as Promise<Array<PromiseSettledResult<StoredInbound[]>>>;
  const group = createGroupCommit<StoreJob, StoredInbound[]>({
    maxSize: GROUP_MAX_BYTES,
    sizeOf: ({ read }) => read.rawGzip.byteLength + read.attachments.reduce((sum, a) => sum + a.content.byteLength, 0),
    async write(jobs) {
      if (jobs.length === 1) return settled(jobs);
      let results: StoredInbound[][];
      try {
        results = await deps.sequelize.transaction(async (transaction) => {
          const done: StoredInbound[][] = [];
          for (const job of jobs) done.push(await storeIn(deps, job.envelope, job.recipients, job.read, transaction));
          return done;
        });
      } catch {
        return settled(jobs);
      }
      return results.map((value) => ({ status: 'fulfilled', value }));
    },
  });
  return { store: (envelope, recipients, read) => group.submit({ envelope, recipients, read }) };
}
