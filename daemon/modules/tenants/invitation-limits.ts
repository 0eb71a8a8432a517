// Who may make the platform mail a stranger, and how much (issue 48 §4). An invitation is a mail the
// platform signs, to an address that never asked for it: only an account whose own address is verified
// sends one, and each tenant and the platform as a whole send at most a daily number of them (platform
// settings invitationsPerTenantPerDay and invitationsPerPlatformPerDay, defaults a real team never
// meets). Counted in invitation_sends (migration 0461), which neither a re-invitation nor a deleted
// tenant resets.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { getPlatformSettings } from '../../db/platform-settings.ts';
import { ForbiddenError, TooManyRequestsError } from '../../errors.ts';

const DAY_MS = 24 * 3600 * 1000;

export const VERIFY_BEFORE_INVITING =
  'Verify your e-mail address before inviting anyone: open the link in the verification mail, or run ' +
  '`svc verify-email --resend` (POST /auth/resend-verification-email) to get a new one.';

/** A 403 unless the inviter's own address is verified. */
export function assertMayMailStrangers<T extends { emailVerifiedAt: Date | null }>(
  inviter: T | null,
): asserts inviter is T {
  if (!inviter?.emailVerifiedAt) throw new ForbiddenError(VERIFY_BEFORE_INVITING, 'EMAIL_NOT_VERIFIED');
}

interface Window {
  sent: number;
  /** When the oldest counted mail leaves the 24-hour window (epoch ms), null when none was sent. */
  oldestLeavesAt: number | null;
}

async function windowOf(sequelize: Sequelize, transaction: Transaction, tenantId: string | null): Promise<Window> {
  const [row] = await sequelize.query<{ sent: string; oldest: Date | null }>(
    `SELECT count(*) AS sent, min(sent_at) AS oldest FROM invitation_sends
      WHERE sent_at > now() - interval '1 day' AND (CAST(:tenantId AS uuid) IS NULL OR tenant_id = :tenantId)`,
    { replacements: { tenantId }, type: QueryTypes.SELECT, transaction },
  );
  return {
    sent: Number(row?.sent ?? 0),
    oldestLeavesAt: row?.oldest ? new Date(row.oldest).getTime() + DAY_MS : null,
  };
}

function capReached(what: string, cap: number, window: Window): TooManyRequestsError {
  const retryAfterSeconds = ((window.oldestLeavesAt ?? Date.now() + DAY_MS) - Date.now()) / 1000;
  return new TooManyRequestsError(
    `${what} sent the ${cap} invitations allowed in 24 hours; try again later. Adding people who already have an ` +
      'account sends no mail and is not limited. A platform admin can raise the cap (svc platform settings set ' +
      'invitationsPerTenantPerDay=… invitationsPerPlatformPerDay=…).',
    retryAfterSeconds,
    'INVITATION_LIMIT',
  );
}

/**
 * Counts one invitation mail of `tenantId`, or throws a 429 (with Retry-After) when the tenant's or the
 * platform's cap for the last 24 hours is reached. The tenant row is locked first, so two invitations
 * of one tenant at once cannot both take its last place; across tenants the platform cap may be passed
 * by the invitations in flight at that moment.
 */
export async function takeInvitationSlot(
  sequelize: Sequelize,
  transaction: Transaction,
  input: { tenantId: string; invitedBy: string },
): Promise<void> {
  await sequelize.query(`SELECT id FROM tenants WHERE id = :tenantId FOR UPDATE`, {
    replacements: { tenantId: input.tenantId },
    transaction,
  });
  const settings = await getPlatformSettings(sequelize, transaction);
  const tenant = await windowOf(sequelize, transaction, input.tenantId);
  if (tenant.sent >= settings.invitationsPerTenantPerDay)
    throw capReached('This tenant has', settings.invitationsPerTenantPerDay, tenant);
  const platform = await windowOf(sequelize, transaction, null);
  if (platform.sent >= settings.invitationsPerPlatformPerDay)
    throw capReached('The platform has', settings.invitationsPerPlatformPerDay, platform);
  await sequelize.query(`DELETE FROM invitation_sends WHERE sent_at < now() - interval '1 day'`, { transaction });
  await sequelize.query(`INSERT INTO invitation_sends (tenant_id, invited_by) VALUES (:tenantId, :invitedBy)`, {
    replacements: input,
    transaction,
  });
}
