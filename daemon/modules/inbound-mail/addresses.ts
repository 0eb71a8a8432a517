// The addresses the inbound SMTP listener takes mail for, and nothing else (an open relay or a
// catch-all would collect spam): the VERP return path of each send, `bounce-<email id>-<tag>@bounces.
// <verified domain>` (see mail/addresses.ts and its returnPathFor), and three fixed mailboxes at the
// service's mail domain — List-Unsubscribe's mailto, the DMARC `rua` address, and the feedback-loop
// address ARF complaints are registered with (their names live in mail/addresses.ts).
import type { Sequelize } from 'sequelize';
import type { Config } from '../../config.ts';
import {
  DMARC_MAILBOX,
  FEEDBACK_MAILBOX,
  emailIdOfReturnPath,
  inboundMailDomain,
  RETURN_PATH_LABEL,
  UNSUBSCRIBE_MAILBOX,
} from '../../mail/addresses.ts';
import { bareAddress } from '../../mail/mailboxes.ts';
import { senderOfLog } from '../emails/sql/lookups.ts';
import { getPlatformSettings } from '../../db/platform-settings.ts';

export type InboundRecipient =
  | { kind: 'bounce'; emailId: string; tenantId: string }
  | { kind: 'unsubscribe' }
  | { kind: 'dmarc' }
  | { kind: 'feedback' };

/**
 * What an RCPT TO stands for, or null when it is none of ours. A return path is ours only when the
 * service wrote it (its tag holds under `linkSigningKey`: knowing an email id is not enough), while its
 * send exists, and at the domain that send's envelope used.
 */
export async function classifyRecipient(
  sequelize: Sequelize,
  config: Config,
  linkSigningKey: Buffer,
  address: string,
): Promise<InboundRecipient | null> {
  const at = address.lastIndexOf('@');
  if (at <= 0) return null;
  const local = address.slice(0, at).toLowerCase();
  const domain = address
    .slice(at + 1)
    .toLowerCase()
    .replace(/\.$/, '');
  const emailId = emailIdOfReturnPath(local, linkSigningKey);
  if (emailId) {
    const log = await senderOfLog(sequelize, emailId);
    if (!log) return null;
    const fromDomain = bareAddress(log.from_address).split('@')[1]?.toLowerCase() ?? '';
    const prefix = `${RETURN_PATH_LABEL}.`;
    const verified = domain.startsWith(prefix) ? domain.slice(prefix.length) : null;
    const viaCustomerDomain = verified !== null && (fromDomain === verified || fromDomain.endsWith(`.${verified}`));
    const platformDomain = (await getPlatformSettings(sequelize)).returnPathDomain?.toLowerCase() ?? null;
    return viaCustomerDomain || domain === platformDomain ? { kind: 'bounce', emailId, tenantId: log.tenant_id } : null;
  }
  if (domain !== inboundMailDomain(config)) return null;
  if (local === UNSUBSCRIBE_MAILBOX) return { kind: 'unsubscribe' };
  if (local === DMARC_MAILBOX) return { kind: 'dmarc' };
  if (local === FEEDBACK_MAILBOX) return { kind: 'feedback' };
  return null;
}
