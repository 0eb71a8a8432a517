// Invitations for addresses with no account. Adding a member whose address has not registered
// mails them a sign-up link (PUBLIC_URL/register?invitation=…); registering with that token (POST
// /auth/register {invitationToken}) creates the account, proves the address, and joins the tenant
// with the invited role, even when registration is otherwise closed. Tokens: 32 random bytes,
// stored as SHA-256, single use, 7 days; re-inviting replaces the pending invitation.
// The mail goes to someone who never asked for it: its subject is the platform's own words, and the
// names people chose (the tenant's, the inviter's) appear only as labelled data in the body; who may
// invite and how many a day is invitation-limits.ts.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { hashToken, newOpaqueToken } from '../auth/tokens.ts';
import { recordAudit } from '../audit/service.ts';
import { sendSystemMail, type SystemMailDeps } from '../../mail/system-mail.ts';
import { ApiError } from '../../errors.ts';
import { takeInvitationSlot } from './invitation-limits.ts';
import type { MemberRole } from '../../../shared/constants.ts';
import type { InvitationBody } from '../../../shared/schemas/tenants.ts';

export const INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;
const IGNORE =
  'If you did not expect this or do not know who invited you, ignore this mail: nothing happens unless you open the link.';

function escapeHtml(value: string): string {
  return value.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}

export function invitationLink(publicUrl: string, token: string): string {
  const url = new URL(`${publicUrl.replace(/\/+$/, '')}/register`);
  url.searchParams.set('invitation', token);
  return url.toString();
}

/** The platform's name in the invitation's subject: the host people reach it at (PUBLIC_URL). */
function platformNameOf(publicUrl: string): string {
  return new URL(publicUrl).host;
}

/** Records the invitation and queues its mail, both in the caller's transaction; a 429 past the daily caps. */
export async function inviteByEmail(
  deps: SystemMailDeps,
  transaction: Transaction,
  input: {
    tenantId: string;
    tenantName: string;
    email: string;
    role: MemberRole;
    invitedBy: string;
    inviterEmail: string;
    ip?: string;
  },
): Promise<InvitationBody> {
  await takeInvitationSlot(deps.sequelize, transaction, { tenantId: input.tenantId, invitedBy: input.invitedBy });
  const token = newOpaqueToken();
  const expiresAt = new Date(Date.now() + INVITATION_TTL_MS);
  await deps.sequelize.query(
    `DELETE FROM invitations WHERE tenant_id = :tenantId AND email = :email AND accepted_at IS NULL`,
    {
      replacements: { tenantId: input.tenantId, email: input.email },
      transaction,
    },
  );
  const [row] = await deps.sequelize.query<{ id: string }>(
    `INSERT INTO invitations (tenant_id, email, role, token_hash, invited_by, expires_at)
     VALUES (:tenantId, :email, :role, :tokenHash, :invitedBy, :expiresAt) RETURNING id`,
    { replacements: { ...input, tokenHash: hashToken(token), expiresAt }, type: QueryTypes.SELECT, transaction },
  );
  const link = invitationLink(deps.config.publicUrl, token);
  const platform = platformNameOf(deps.config.publicUrl);
  const intro = `You are invited to join a team on ${platform} as ${input.role}.`;
  const facts: [string, string][] = [
    ['Team name', input.tenantName],
    ['Invited by', input.inviterEmail],
  ];
  const howTo = 'Create your account with this link (it works once and expires in 7 days):';
  // The svc command that does it, not the raw API call behind it (issue 49 §5).
  const api = `Or from the command line: SVC_BASE_URL=${deps.config.publicUrl} svc register --email ${input.email} --invitation ${token}`;
  await sendSystemMail(
    deps,
    {
      to: input.email,
      subject: `Invitation to join a team on ${platform}`,
      text:
        `${intro}\n\n${facts.map(([label, value]) => `${label}: ${value}`).join('\n')}\n\n` +
        `${howTo}\n${link}\n\n${api}\n\n${IGNORE}\n`,
      html:
        `<p>${escapeHtml(intro)}</p><table>${facts.map(([label, value]) => `<tr><th align="left">${label}</th><td>${escapeHtml(value)}</td></tr>`).join('')}</table>` +
        `<p>${escapeHtml(howTo)}<br><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>` +
        `<p>${escapeHtml(api)}</p><p>${escapeHtml(IGNORE)}</p>`,
    },
    transaction,
  );
  await recordAudit(
    deps.sequelize,
    {
      action: 'member.invited',
      tenantId: input.tenantId,
      adminId: input.invitedBy,
      ip: input.ip,
      metadata: { email: input.email, role: input.role },
    },
    transaction,
  );
  return { invitationId: row.id, email: input.email, role: input.role, expiresAt: expiresAt.toISOString() };
}

export function invalidInvitation(): ApiError {
  return new ApiError(
    400,
    'INVALID_TOKEN',
    'The invitation is invalid, already used, expired, or for another e-mail address: ask for a new one.',
    [{ field: 'body.invitationToken', message: 'not accepted' }],
  );
}

export interface PendingInvitation {
  id: string;
  tenantId: string;
  role: MemberRole;
}

/** The live invitation of `token` for `email`, locked for this transaction; null when there is none. */
export async function findLiveInvitation(
  sequelize: Sequelize,
  token: string,
  email: string,
  transaction: Transaction,
): Promise<PendingInvitation | null> {
  const [row] = await sequelize.query<{ id: string; tenant_id: string; role: MemberRole }>(
    `SELECT id, tenant_id, role FROM invitations
      WHERE token_hash = :tokenHash AND email = :email AND accepted_at IS NULL AND expires_at > now()
      FOR UPDATE`,
    { replacements: { tokenHash: hashToken(token), email }, type: QueryTypes.SELECT, transaction },
  );
  return row ? { id: row.id, tenantId: row.tenant_id, role: row.role } : null;
}

/** What the sign-up page shows of a live invitation; null when it is unknown, used or expired. */
export interface InvitationPreview {
  email: string;
  role: MemberRole;
  tenantName: string;
}

/** Reads a live invitation by its token alone (no lock, nothing used): for the page behind the link. */
export async function previewInvitation(sequelize: Sequelize, token: string): Promise<InvitationPreview | null> {
  const [row] = await sequelize.query<{ email: string; role: MemberRole; tenant_name: string }>(
    `SELECT i.email, i.role, t.name AS tenant_name FROM invitations i JOIN tenants t ON t.id = i.tenant_id
      WHERE i.token_hash = :tokenHash AND i.accepted_at IS NULL AND i.expires_at > now()`,
    { replacements: { tokenHash: hashToken(token) }, type: QueryTypes.SELECT },
  );
  return row ? { email: row.email, role: row.role, tenantName: row.tenant_name } : null;
}

/** Uses the invitation: the new admin joins its tenant with its role. */
export async function acceptInvitation(
  sequelize: Sequelize,
  invitation: PendingInvitation,
  adminId: string,
  transaction: Transaction,
  ip?: string,
): Promise<void> {
  await sequelize.query(`UPDATE invitations SET accepted_at = now(), accepted_by = :adminId WHERE id = :id`, {
    replacements: { id: invitation.id, adminId },
    transaction,
  });
  await sequelize.query(
    `INSERT INTO memberships (tenant_id, admin_id, role, created_at, updated_at) VALUES (:tenantId, :adminId, :role, now(), now())
     ON CONFLICT DO NOTHING`,
    { replacements: { tenantId: invitation.tenantId, adminId, role: invitation.role }, transaction },
  );
  await recordAudit(
    sequelize,
    {
      action: 'member.added',
      tenantId: invitation.tenantId,
      adminId,
      ip,
      target: adminId,
      metadata: { role: invitation.role, invitation: invitation.id },
    },
    transaction,
  );
}
