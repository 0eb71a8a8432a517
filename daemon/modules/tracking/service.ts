// Opens, clicks and unsubscribes arriving through the signed links of a message.
import type { Database } from '../../db/index.ts';
import type { Secrets } from '../../secrets.ts';
import { readLinkToken } from '../../mail/link-tokens.ts';
import { emitEvent } from '../webhooks/events.ts';
import { suppressAddress } from '../suppressions/sql/suppressions.ts';
import { findLogIn, findLogOfLink } from '../emails/sql/log-records.ts';
import { recordEmailEvent, recordEmailOutcomeEvent } from '../emails/outcomes.ts';

export interface TrackingDeps {
  db: Pick<Database, 'sequelize'>;
  secrets: Pick<Secrets, 'linkSigningKey'>;
}

/** Who follows a link: nobody signed in; the signed token in the input is the only credential. */
export interface LinkVisitor {
  userAgent?: string;
}

/** Records an open; invalid tokens are ignored (the pixel is served either way). */
export async function recordOpen(deps: TrackingDeps, visitor: LinkVisitor, input: { token: string }): Promise<void> {
  const { token } = input;
  const { userAgent } = visitor;
  const content = readLinkToken(deps.secrets.linkSigningKey, token, 'o');
  if (!content) return;
  const log = await findLogOfLink(deps.db.sequelize, content.e);
  if (!log) return;
  await deps.db.sequelize.transaction((tx) =>
    recordEmailOutcomeEvent(
      deps.db.sequelize,
      log,
      'email.opened',
      { userAgent: userAgent?.slice(0, 300) ?? null },
      tx,
    ),
  );
}

/** The original URL of a click link (recording the click), or null for a token we did not sign. */
export async function recordClick(
  deps: TrackingDeps,
  visitor: LinkVisitor,
  input: { token: string },
): Promise<string | null> {
  const { token } = input;
  const { userAgent } = visitor;
  const content = readLinkToken(deps.secrets.linkSigningKey, token, 'c');
  if (!content || !/^https?:\/\//i.test(content.u)) return null;
  const log = await findLogOfLink(deps.db.sequelize, content.e);
  if (log) {
    await deps.db.sequelize.transaction((tx) =>
      recordEmailOutcomeEvent(
        deps.db.sequelize,
        log,
        'email.clicked',
        { url: content.u, userAgent: userAgent?.slice(0, 300) ?? null },
        tx,
      ),
    );
  }
  return content.u;
}

/** The address an unsubscribe token stands for, without acting on it (the GET confirmation page). */
export function unsubscribeTarget(
  deps: TrackingDeps,
  _visitor: LinkVisitor,
  input: { token: string },
): { address: string } | null {
  const content = readLinkToken(deps.secrets.linkSigningKey, input.token, 'u');
  return content ? { address: content.a } : null;
}

/**
 * RFC 8058 one-click, or the List-Unsubscribe mailto (`via` says which in the suppression's detail):
 * suppresses the address and emits contact.unsubscribed. False for a bad token.
 */
export async function unsubscribe(
  deps: TrackingDeps,
  _visitor: LinkVisitor,
  input: { token: string; via?: string },
): Promise<boolean> {
  const { via = 'one-click unsubscribe' } = input;
  const content = readLinkToken(deps.secrets.linkSigningKey, input.token, 'u');
  if (!content) return false;
  await deps.db.sequelize.transaction(async (tx) => {
    const added = await suppressAddress(
      deps.db.sequelize,
      { tenantId: content.t, email: content.a, reason: 'unsubscribe', emailId: content.e, detail: via },
      tx,
    );
    if (!added) return;
    const log = await findLogIn(deps.db.sequelize, content.t, content.e, tx);
    if (log)
      await recordEmailEvent(
        deps.db.sequelize,
        { tenantId: content.t, emailId: log.id, type: 'unsubscribed', data: { email: content.a } },
        tx,
      );
    await emitEvent(
      deps.db.sequelize,
      {
        tenantId: content.t,
        type: 'contact.unsubscribed',
        emailId: log ? log.id : null,
        data: { email: content.a, emailId: content.e, messageId: log?.messageId ?? null },
      },
      tx,
    );
  });
  return true;
}
