// Tenants, members and invitations, audit events: the calls behind `svc tenants …` and `svc members …`.
import type { SvcClient } from '../client.ts';
import { CliFailure, EXIT, NoTenantError } from '../errors.ts';
import type { PageOf } from '../../shared/schemas/common.ts';
import type {
  AuditEventBody,
  InvitationBody,
  MemberBody,
  TenantBody,
  UpdateTenantBody,
} from '../../shared/schemas/tenants.ts';

const TENANT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * One of the caller's tenants named by id or by name (case-insensitive): `svc tenants use` and every
 * command that asks for a tenant read a tenant the same way.
 */
export function pickTenant(tenants: TenantBody[], wanted: string): TenantBody {
  const byId = tenants.find((candidate) => candidate.id === wanted);
  if (byId) return byId;
  const byName = tenants.filter((candidate) => candidate.name.toLowerCase() === wanted.toLowerCase());
  if (byName.length > 1)
    throw new CliFailure(
      `${byName.length} of your tenants are named "${wanted}": pass the id (see \`svc tenants list\`).`,
      EXIT.usage,
      'AMBIGUOUS_NAME',
    );
  if (byName.length === 0)
    throw new CliFailure(
      TENANT_ID.test(wanted)
        ? `You are not a member of a tenant with id ${wanted}: see \`svc tenants list\`.`
        : `no tenant named "${wanted}" among yours: see \`svc tenants list\`.`,
      EXIT.refused,
      'NOT_A_MEMBER',
    );
  return byName[0];
}

/**
 * The tenant a command acts on: --tenant (or the argument) when given, by id or by name, else the
 * current one. An id goes as it is (a platform admin may act on a tenant that is not theirs).
 */
export async function tenantIdFor(client: SvcClient, given?: string): Promise<string> {
  if (given === undefined || TENANT_ID.test(given)) {
    const id = given ?? client.http.tenantId;
    if (!id) throw new NoTenantError();
    return id;
  }
  return pickTenant(await client.listTenants(), given).id;
}

const tenantPath = (tenantId: string, suffix = '') => `/tenants/${encodeURIComponent(tenantId)}${suffix}`;

export function updateTenant(client: SvcClient, tenantId: string, changes: UpdateTenantBody) {
  return client.http.request<TenantBody>('PATCH', tenantPath(tenantId), { json: changes, tenant: false });
}
export function deleteTenant(client: SvcClient, tenantId: string) {
  return client.http.request<{ ok: true }>('DELETE', tenantPath(tenantId), { tenant: false });
}
/** block, unblock (platform admins) and resume-sending (owners and admins). */
export function tenantAction(client: SvcClient, tenantId: string, action: 'block' | 'unblock' | 'resume-sending') {
  return client.http.request<TenantBody>('POST', tenantPath(tenantId, `/${action}`), { tenant: false });
}
export function listAuditEvents(client: SvcClient, tenantId: string, query: { page?: number; limit?: number }) {
  return client.http.request<PageOf<AuditEventBody>>('GET', tenantPath(tenantId, '/audit-events'), {
    query,
    tenant: false,
  });
}

export function listMembers(client: SvcClient, tenantId: string, query: { page?: number; limit?: number } = {}) {
  return client.http.request<PageOf<MemberBody>>('GET', tenantPath(tenantId, '/members'), { query, tenant: false });
}

/** 201 a member (the address had an account) or 202 an invitation mailed to it. */
export function inviteMember(client: SvcClient, tenantId: string, email: string, role: MemberBody['role']) {
  return client.http.request<MemberBody | InvitationBody>('POST', tenantPath(tenantId, '/members'), {
    json: { email, role },
    tenant: false,
  });
}

export function changeMemberRole(client: SvcClient, tenantId: string, adminId: string, role: MemberBody['role']) {
  return client.http.request<MemberBody>(
    'PATCH',
    tenantPath(tenantId, `/members/${encodeURIComponent(adminId)}/role`),
    { json: { role }, tenant: false },
  );
}

export function removeMember(client: SvcClient, tenantId: string, adminId: string) {
  return client.http.request<unknown>('DELETE', tenantPath(tenantId, `/members/${encodeURIComponent(adminId)}`), {
    tenant: false,
  });
}

/** A member named by admin id or e-mail address (any case). */
export async function resolveMember(client: SvcClient, tenantId: string, who: string): Promise<MemberBody> {
  const members = (await listMembers(client, tenantId, { limit: 100 })).data;
  const found = members.find((m) => m.adminId === who || m.email.toLowerCase() === who.toLowerCase());
  if (!found)
    throw new CliFailure(
      `${who} is not a member of this tenant: see \`svc members list\`.`,
      EXIT.refused,
      'NOT_A_MEMBER',
    );
  return found;
}

export const MEMBER_ROLES = ['owner', 'admin', 'developer', 'viewer'] as const;
