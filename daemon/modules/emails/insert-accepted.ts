// Writing accepted sends: the logs, their 'queued' timeline rows, their send jobs and the quota
// count in ONE statement (data-modifying CTEs, ./sql/insert-logs.ts) on plain `pg`, declared once and prepared per
// connection (daemon/db/sql.ts), so a plain send is a single round trip that commits on its own,
// and a send with an Idempotency-Key adds only its key row to the transaction.
//
// The statement also re-checks, in the same snapshot, everything the caller decided from its
// cached tenant state (tenants/state-cache.ts): the tenant not paused (nor blocked, for a key), its
// plan, limit and quota cycle unchanged, the key not revoked, the sender domain verified, no
// recipient suppressed. When one of those no longer holds it writes nothing and answers
// `fresh: false`; the caller reads the state again and decides with that (emails/service.ts).
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Sql } from '../../db/sql.ts';
import { INSERT_ACCEPTED, INSERT_ACCEPTED_SPOOLED } from './sql/insert-logs.ts';
import { recipientsOf, type NormalizedSend } from './validate.ts';
import { spoolRecipients } from '../../mta/sql/spool-insert.ts';
import { recipientsByDomain } from '../../mta/spooler.ts';

export interface AcceptedSend {
  request: NormalizedSend;
  id: string;
  messageId: string;
  /** The message as it leaves, signed: spooled by the accept statement itself (INSERT_ACCEPTED_SPOOLED). */
  spooled?: SpooledAtAccept;
}

/** A message built and signed before its accept (an SMTP submission), which the accept spools. */
export interface SpooledAtAccept {
  message: Buffer;
  envelopeFrom: string;
  /** The envelope's recipients (To, Cc, Bcc), bare. */
  recipients: string[];
  /** The headers as they go out, for the log (its sent_headers, written with its first outcome). */
  sentHeaders: string;
  /**
   * Given where this process runs an MTA thread (ROLE=all): called with the message's spool row ids before
   * the statement is sent, to hand the message to that thread in memory (mta/spooled-messages.ts), so its
   * claim does not read it back. The statement writes it all the same: the spool row stays the durable copy.
   */
  handOver?: (rowIds: string[]) => void;
}

/** What the caller believed when it decided to accept: the statement checks it again. */
export interface ExpectedTenantState {
  plan: string;
  monthlyLimit: number | null;
  /** quota_cycles.started_at (null when billing never restarted the cycle). */
  cycleStartedAt: Date | null;
  /** Names one of which must be a verified domain of the tenant (the sender's and its parents); null: no check. */
  senderDomains: string[] | null;
  /** Hold the send to its API key (not revoked) and the tenant's status (not blocked). */
  checkKey: boolean;
}

export interface InsertAcceptedOptions {
  tenantId: string;
  apiKeyId: string | null;
  testMode: boolean;
  /** Sends counted against the quota in `cycleStart` (0 for test keys). */
  counted: number;
  /** The most sends the cycle may count (110 % of the limit): a reservation past it inserts nothing. */
  quotaCap: number;
  cycleStart: Date;
  /** Job run time; undefined runs it now (a sync send's safety job runs later). */
  runAt?: Date;
  maxAttempts: number;
  jobKeyPrefix: string;
  expected: ExpectedTenantState;
  /**
   * Hours a spooled message is tried (DELIVERY_EXPIRY_HOURS) when the sends carry their message
   * (AcceptedSend.spooled): they are spooled instead of getting send jobs, and every send of the call must
   * carry one. Null: send jobs.
   */
  spoolExpiryHours: number | null;
}

export interface InsertOutcome {
  /** False: the tenant's state is not what the caller expected (nothing written). */
  fresh: boolean;
  /** Rows written; 0 with `fresh` and counted sends means the quota reservation failed. */
  inserted: number;
  /** The cycle's count right after this reservation (null when nothing was reserved). */
  used: number | null;
}

/**
 * The sends as the statement's jsonb rows (tracking left null where the send says nothing: the
 * tenant's default applies) and their bodies, apart: every HTML and text body one after the other in
 * one buffer, sent as a binary bytea parameter, each row naming its bodies' byte ranges. Inside the
 * jsonb, 100 KB bodies cost JSON.stringify on the API node and PostgreSQL's JSON lexer a character at
 * a time (in bench:mta's accept, 43 % of the accepting backend's CPU and as much of the API node's);
 * as bytes they are copied once and checked as UTF-8.
 */
function rowsOf(sends: AcceptedSend[]): {
  rows: string;
  bodies: Buffer;
  spool: string | null;
  handOvers: (() => void)[];
} {
  let size = 0;
  for (const { request, spooled } of sends)
    size += byteLengthOf(request.htmlBody) + byteLengthOf(request.textBody) + (spooled?.message.length ?? 0);
  const bodies = Buffer.allocUnsafe(size);
  let at = 0;
  const place = (body: string | null) => {
    if (body === null) return { at: null, length: null };
    const range = { at, length: bodies.write(body, at, 'utf8') };
    at += range.length;
    return range;
  };
  const rows = sends.map(({ request: r, id, messageId }) => {
    const html = place(r.htmlBody);
    const text = place(r.textBody);
    return {
      id,
      project_id: r.projectId,
      message_id: messageId,
      from_address: r.from,
      to_addresses: r.to,
      cc_addresses: r.cc,
      bcc_addresses: r.bcc,
      reply_to: r.replyTo,
      subject: r.subject,
      html_at: html.at,
      html_length: html.length,
      text_at: text.at,
      text_length: text.length,
      template_version_id: r.templateVersionId,
      data: r.data,
      locale: r.locale,
      headers: r.headers,
      tags: r.tags,
      metadata: r.metadata,
      attachments: r.attachments,
      track_opens: r.trackOpens ?? null,
      track_clicks: r.trackClicks ?? null,
      resent_from: r.resentFrom ?? null,
      scheduled_email_id: r.scheduledEmailId ?? null,
    };
  });
  // The spooled messages after the bodies, a spool row per destination domain (INSERT_ACCEPTED_SPOOLED's $19).
  const handOvers: (() => void)[] = [];
  const spool = sends.flatMap(({ id, spooled }) => {
    if (!spooled) return [];
    const messageAt = at;
    at += spooled.message.copy(bodies, at);
    const byDomain = [...recipientsByDomain(spooled.recipients)];
    const ids = byDomain.map(() => randomUUID());
    const { handOver } = spooled;
    if (handOver) handOvers.push(() => handOver(ids));
    return byDomain.map(([domain, addresses], index) => ({
      id: ids[index],
      email_id: id,
      domain,
      recipients: spoolRecipients(addresses),
      envelope_from: spooled.envelopeFrom,
      message_at: messageAt,
      message_length: spooled.message.length,
      sent_headers: spooled.sentHeaders,
    }));
  });
  return {
    rows: JSON.stringify(rows),
    bodies,
    spool: sends[0]?.spooled ? JSON.stringify(spool) : null,
    handOvers,
  };
}

const byteLengthOf = (body: string | null) => (body === null ? 0 : Buffer.byteLength(body, 'utf8'));

/**
 * Writes the sends (see the header) on the pool, or on `client` inside a transaction. The caller
 * wakes the send workers once they are committed.
 */
export async function insertAcceptedSends(
  sql: Sql,
  sends: AcceptedSend[],
  options: InsertAcceptedOptions,
  client?: pg.ClientBase,
): Promise<InsertOutcome> {
  if (sends.length === 0) return { fresh: true, inserted: 0, used: null };
  const recipients = [...new Set(sends.flatMap(({ request }) => recipientsOf(request)))];
  const { rows, bodies, spool, handOvers } = rowsOf(sends);
  const spooled = options.spoolExpiryHours !== null;
  if (spooled !== (spool !== null) || sends.some((send) => (send.spooled !== undefined) !== spooled))
    throw new Error('insertAcceptedSends: spoolExpiryHours is set exactly when every send carries its message');
  // Before the statement, so the message is there when the MTA loop is woken after the commit. A
  // statement that writes nothing (or a group run again alone, with new row ids) leaves messages no
  // claim takes: the hand-over is bounded and drops the oldest first.
  for (const handOver of handOvers) handOver();
  const [row] = await sql.rows<InsertOutcome>(
    spooled ? INSERT_ACCEPTED_SPOOLED : INSERT_ACCEPTED,
    [
      options.tenantId,
      options.apiKeyId,
      options.testMode,
      rows,
      options.counted,
      options.quotaCap,
      options.cycleStart,
      options.runAt ?? null,
      options.maxAttempts,
      options.jobKeyPrefix,
      options.expected.plan,
      options.expected.monthlyLimit,
      options.expected.cycleStartedAt,
      options.expected.senderDomains,
      recipients,
      new Date(),
      options.expected.checkKey,
      bodies,
      ...(spooled ? [spool, options.spoolExpiryHours] : []),
    ],
    client,
  );
  return row;
}
