// Replies linked to the send they answer (issue 52 §3, docs/inbound.md "Replies linked to their send").
// An inbound message names the messages it answers in In-Reply-To and References; when one of them is
// the Message-ID of a send of the route's tenant, the reply is that send's: `email.replied` goes on the
// original log through the one outcome path (its timeline row and its webhook, emails/outcomes.ts), the
// log's page lists the reply, and `inbound.received` carries the link (receive.ts).
// Only the route's tenant's sends are looked at: a reply that quotes another tenant's Message-ID (it is
// in every message that tenant sent) never reaches that tenant's log.
import type { Sequelize, Transaction } from 'sequelize';
import type { InboundParsedMessage } from '../../../shared/schemas/inbound-message.ts';
import { repliedLog } from '../emails/sql/reply-links.ts';
import { lockLogForOutcome } from '../emails/sql/log-records.ts';
import { recordEmailOutcomeEvent } from '../emails/outcomes.ts';
import { messageRow } from './sql/messages.ts';

export interface ReplyLinkDeps {
  sequelize: Sequelize;
}

/** More names than an honest thread's References holds are not looked up: the newest are kept. */
const MAX_CANDIDATES = 32;

/** The ids the reply names, best first: In-Reply-To, then References from the newest, each once. */
export function replyCandidates(parsed: Pick<InboundParsedMessage, 'inReplyTo' | 'references'>): string[] {
  const named = [...(parsed.inReplyTo ? [parsed.inReplyTo] : []), ...[...parsed.references].reverse()];
  return [...new Set(named)].slice(0, MAX_CANDIDATES);
}

/** The tenant's send this message answers, or null. */
export function linkReply(
  deps: ReplyLinkDeps,
  ctx: { tenantId: string },
  parsed: Pick<InboundParsedMessage, 'inReplyTo' | 'references'>,
  transaction?: Transaction,
): Promise<{ emailId: string; messageId: string } | null> {
  return repliedLog(deps.sequelize, ctx.tenantId, replyCandidates(parsed), transaction);
}

/** What the original log's timeline row and the `email.replied` webhook say of the reply. */
export interface ReplySummary {
  inboundId: string;
  from: string | null;
  subject: string | null;
  receivedAt: string;
}

/**
 * `email.replied` on log `emailId` for the stored inbound message `inboundId`, both the tenant's: the
 * timeline row `replied` with `{ reply }` and the webhook event with the log's fields and `reply`. In the
 * caller's transaction when given (the one that stored the message, so that both commit together).
 * Answers false when the log or the message is not the tenant's (nothing is recorded).
 */
export async function recordReply(
  deps: ReplyLinkDeps,
  input: { tenantId: string; emailId: string; inboundId: string },
  transaction?: Transaction,
): Promise<boolean> {
  if (!transaction) return deps.sequelize.transaction((own) => recordReply(deps, input, own));
  const message = await messageRow(deps.sequelize, input.tenantId, input.inboundId, transaction);
  if (!message) return false;
  const log = await lockLogForOutcome(deps.sequelize, input.tenantId, input.emailId, transaction);
  if (!log) return false;
  const reply: ReplySummary = {
    inboundId: message.id,
    from: message.from_address,
    subject: message.subject,
    receivedAt: message.created_at.toISOString(),
  };
  await recordEmailOutcomeEvent(deps.sequelize, log, 'email.replied', { reply }, transaction);
  return true;
}
