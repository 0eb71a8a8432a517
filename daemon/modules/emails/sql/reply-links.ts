// The send an inbound reply answers (issue 52 §3, inbound-routing/reply-link.ts): the tenant's log whose
// Message-ID is one the reply names, the best-ranked name first (In-Reply-To, then References from the
// newest). One statement: each candidate is probed on email_logs_message_id_idx (one probe per monthly
// partition), the tenant's condition filtering the row found. A Message-ID is ours alone (`<log id@…>`,
// emails/service.ts messageIdFor), so the probe finds at most one row per name; the tenant's condition
// is what keeps a reply from linking to another tenant's send that it quotes. And the log a reply address
// names (`reply+<log id>.<tag>@…`, mail/addresses.ts): its tag, checked before, is the credential.
import type { Sequelize, Transaction } from 'sequelize';
import { declare, sequelizeRows } from '../../../db/sql.ts';

const REPLIED_LOG = declare(
  'emails.replied-log',
  `SELECT l.id::text AS email_id, l.message_id
     FROM unnest($2::text[]) WITH ORDINALITY AS named(message_id, rank)
     JOIN email_logs l ON l.message_id = named.message_id
    WHERE l.tenant_id::text = $1
    ORDER BY named.rank
    LIMIT 1`,
);

/** The first of `messageIds` (in the order given) that is a Message-ID of a log of `tenantId`, or null. */
export async function repliedLog(
  sequelize: Sequelize,
  tenantId: string,
  messageIds: string[],
  transaction?: Transaction,
): Promise<{ emailId: string; messageId: string } | null> {
  if (messageIds.length === 0) return null;
  const [row] = await sequelizeRows<{ email_id: string; message_id: string }>(
    sequelize,
    REPLIED_LOG,
    [tenantId, messageIds],
    transaction,
  );
  return row ? { emailId: row.email_id, messageId: row.message_id } : null;
}

const LOG_OF_REPLY_ADDRESS = declare(
  'emails.log-of-reply-address',
  `SELECT l.tenant_id::text AS tenant_id, l.message_id FROM email_logs l WHERE l.id = $1`,
);

/**
 * The tenant and Message-ID of log `emailId`, named by a reply address whose tag held (one probe of the
 * primary key per monthly partition); null when the log is gone.
 */
export async function logOfReplyAddress(
  sequelize: Sequelize,
  emailId: string,
): Promise<{ tenantId: string; messageId: string } | null> {
  const [row] = await sequelizeRows<{ tenant_id: string; message_id: string }>(sequelize, LOG_OF_REPLY_ADDRESS, [
    emailId,
  ]);
  return row ? { tenantId: row.tenant_id, messageId: row.message_id } : null;
}
