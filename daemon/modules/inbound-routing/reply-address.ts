// Reply addresses at RCPT TO (docs/inbound.md "Reply addresses"): `reply+<log id>.<tag>@<platform inbound
// domain>`, which a send carries as its Reply-To when its tenant turned reply addresses on. Asked before
// the routes: the tag must hold under our key (mail/addresses.ts), the log must still exist (its
// retention) and its tenant must be active with the setting on; anything else is no mailbox (550 in the
// session, no bounce afterwards). A good one is received as the tenant's token address would be — the
// first route taking `<token>@<platform inbound domain>` decides — or, when no route takes that, stored
// for the API: a reply the tenant asked for is never refused for want of a route. The reply is linked
// to the send the address names (receive.ts), whatever its headers say.
import type { Sequelize } from 'sequelize';
import { emailIdOfReplyAddress } from '../../mail/addresses.ts';
import { logOfReplyAddress } from '../emails/sql/reply-links.ts';
import { replyReceivingTenant } from './sql/addresses.ts';
import type { RoutedRecipient } from './matching.ts';

export interface ReplyAddressDeps {
  sequelize: Sequelize;
  linkSigningKey: Buffer;
  platformDomain: string;
  /** The recipient the tenant's routes make of an address (the route cache's own resolve). */
  resolve(address: string): Promise<RoutedRecipient | null>;
}

/** The recipient a reply address at the platform domain stands for, or null (no mailbox: 550). */
export async function replyRecipient(deps: ReplyAddressDeps, local: string): Promise<RoutedRecipient | null> {
  const emailId = emailIdOfReplyAddress(local, deps.linkSigningKey);
  if (!emailId) return null;
  const log = await logOfReplyAddress(deps.sequelize, emailId);
  if (!log) return null;
  const tenant = await replyReceivingTenant(deps.sequelize, log.tenantId);
  if (!tenant) return null;
  const address = `${local.toLowerCase()}@${deps.platformDomain}`;
  const repliesTo = { emailId, messageId: log.messageId };
  const asToken = await deps.resolve(`${tenant.token}@${deps.platformDomain}`);
  if (asToken) return { ...asToken, address, mailboxHash: null, repliesTo };
  return { route: null, mailboxHash: null, tenantId: log.tenantId, plan: tenant.plan, address, repliesTo };
}
