// /tenants: the tenant itself, its members, its API keys, block/unblock, resume-sending and its
// audit log. Admin sessions only (API keys get 403); the tenant comes from the path.
import type { FastifyRequest } from 'fastify';
import type { App, AppDeps } from '../../app-types.ts';
import { access } from '../../access.ts';
import { principalOf } from '../../access.ts';
import { DefaultPageQuery, ErrorBody, OkBody, Paged } from '../../../shared/schemas/common.ts';
import {
  ApiKeyBody,
  ApiKeyParams,
  AuditEventBody,
  CreateApiKeyBody,
  CreatedApiKeyBody,
  CreateTenantBody,
  InvitationBody,
  InviteMemberBody,
  MemberBody,
  MemberParams,
  TenantBody,
  TenantParams,
  UpdateMemberRoleBody,
  UpdateTenantBody,
} from '../../../shared/schemas/tenants.ts';
import { UnauthorizedError } from '../../errors.ts';
import {
  blockTenant,
  createTenant,
  deleteTenant,
  getTenant,
  listTenants,
  assertMember,
  requireTenantRole,
  resumeSending,
  unblockTenant,
  updateTenant,
  type Actor,
} from './service.ts';
import { addMember, changeMemberRole, listMembers, removeMember } from './members.ts';
import { createApiKey, listApiKeys, revokeApiKey, rotateApiKey } from './api-keys.ts';
import { listTenantAuditEvents } from '../audit/service.ts';
import { getTenantRetention, updateTenantRetention } from '../retention/service.ts';
import { TenantRetentionBody, UpdateTenantRetentionBody } from '../../../shared/schemas/retention.ts';

function actorOf(request: FastifyRequest): Actor {
  const principal = principalOf(request);
  if (principal.kind !== 'admin') throw new UnauthorizedError();
  return { adminId: principal.adminId, isPlatformAdmin: principal.isPlatformAdmin, ip: request.ip };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function pageOf(query: { page?: number; limit?: number }): { page: number; limit: number } {
  return { page: query.page ?? 1, limit: query.limit ?? 20 };
}

export default async function tenantRoutes(app: App, deps: AppDeps): Promise<void> {
  const tags = ['tenants'];
  const session = { access: access.session({ tenant: false }) };
  const platformAdmin = { access: access.session({ tenant: false, platformAdmin: true }) };
  const denied = { 401: ErrorBody, 403: ErrorBody };
  const invalid = { 400: ErrorBody };

  // Runs after the auth plugin's check, still before validation: a non-member gets 403 whatever
  // the body. Platform admins pass; the services decide what they may do without membership.
  app.addHook('preValidation', async (request) => {
    const tenantId = (request.params as { tenantId?: string } | undefined)?.tenantId;
    const principal = request.principal;
    if (!tenantId || !UUID.test(tenantId) || principal?.kind !== 'admin' || principal.isPlatformAdmin) return;
    await assertMember(deps.db.sequelize, tenantId.toLowerCase(), principal.adminId);
  });

  app.post(
    '/tenants',
    {
      config: session,
      schema: {
        tags,
        summary: 'Create a tenant (you become its owner; plan free)',
        body: CreateTenantBody,
        response: { 201: TenantBody, ...invalid, ...denied },
      },
    },
    async (request, reply) => reply.code(201).send(await createTenant(deps, actorOf(request), request.body)),
  );

  app.get(
    '/tenants',
    {
      config: session,
      schema: {
        tags,
        summary: 'The tenants you are a member of',
        querystring: DefaultPageQuery,
        response: { 200: Paged(TenantBody), ...invalid, ...denied },
      },
    },
    async (request) => listTenants(deps, actorOf(request), pageOf(request.query)),
  );

  app.get(
    '/tenants/:tenantId',
    {
      config: session,
      schema: {
        tags,
        summary: 'One tenant (members; platform admins see any)',
        params: TenantParams,
        response: { 200: TenantBody, 404: ErrorBody, ...denied },
      },
    },
    async (request) => getTenant(deps, actorOf(request), { tenantId: request.params.tenantId }),
  );

  app.patch(
    '/tenants/:tenantId',
    {
      config: session,
      schema: {
        tags,
        summary: 'Rename (owners, admins); plan and monthlyLimit (platform admins only)',
        params: TenantParams,
        body: UpdateTenantBody,
        response: { 200: TenantBody, 404: ErrorBody, ...invalid, ...denied },
      },
    },
    async (request) => updateTenant(deps, actorOf(request), { tenantId: request.params.tenantId, body: request.body }),
  );

  app.delete(
    '/tenants/:tenantId',
    {
      config: session,
      schema: {
        tags,
        summary: 'Delete the tenant and all its data (owners)',
        params: TenantParams,
        response: { 200: OkBody, ...denied },
      },
    },
    async (request) => {
      await deleteTenant(deps, actorOf(request), { tenantId: request.params.tenantId });
      return { ok: true as const };
    },
  );

  app.get(
    '/tenants/:tenantId/retention',
    {
      config: session,
      schema: {
        tags,
        summary:
          "How long the tenant's history is kept: overrides, platform default, effective (members; platform admins)",
        params: TenantParams,
        response: { 200: TenantRetentionBody, 404: ErrorBody, ...denied },
      },
    },
    async (request) => getTenantRetention(deps, actorOf(request), { tenantId: request.params.tenantId }),
  );

  app.patch(
    '/tenants/:tenantId/retention',
    {
      config: session,
      schema: {
        tags,
        summary:
          'Shorten (or clear, null) retention horizons in days (owners, admins); longer than the platform default answers 400',
        params: TenantParams,
        body: UpdateTenantRetentionBody,
        response: { 200: TenantRetentionBody, 404: ErrorBody, ...invalid, ...denied },
      },
    },
    async (request) =>
      updateTenantRetention(deps, actorOf(request), { tenantId: request.params.tenantId, body: request.body }),
  );

  app.post(
    '/tenants/:tenantId/members',
    {
      config: session,
      schema: {
        tags,
        summary:
          'Add an admin by e-mail with a role (admins; owners for the owner role): 201 member, or 202 with an invitation mailed when the address has no account yet',
        params: TenantParams,
        body: InviteMemberBody,
        response: { 201: MemberBody, 202: InvitationBody, 404: ErrorBody, 409: ErrorBody, ...invalid, ...denied },
      },
    },
    async (request, reply) => {
      const added = await addMember(deps, actorOf(request), { tenantId: request.params.tenantId, body: request.body });
      return 'member' in added ? reply.code(201).send(added.member) : reply.code(202).send(added.invitation);
    },
  );

  app.get(
    '/tenants/:tenantId/members',
    {
      config: session,
      schema: {
        tags,
        summary: 'Members and their roles',
        params: TenantParams,
        querystring: DefaultPageQuery,
        response: { 200: Paged(MemberBody), ...invalid, ...denied },
      },
    },
    async (request) =>
      listMembers(deps, actorOf(request), { tenantId: request.params.tenantId, ...pageOf(request.query) }),
  );

  app.patch(
    '/tenants/:tenantId/members/:targetAdminId/role',
    {
      config: session,
      schema: {
        tags,
        summary: "Change a member's role (admins; owners for the owner role; the last owner stays owner)",
        params: MemberParams,
        body: UpdateMemberRoleBody,
        response: { 200: MemberBody, 404: ErrorBody, 409: ErrorBody, ...invalid, ...denied },
      },
    },
    async (request) =>
      changeMemberRole(deps, actorOf(request), {
        tenantId: request.params.tenantId,
        targetAdminId: request.params.targetAdminId,
        role: request.body.role,
      }),
  );

  app.delete(
    '/tenants/:tenantId/members/:targetAdminId',
    {
      config: session,
      schema: {
        tags,
        summary: 'Remove a member (admins), or leave (yourself); the last owner cannot leave',
        params: MemberParams,
        response: { 200: OkBody, 404: ErrorBody, 409: ErrorBody, ...denied },
      },
    },
    async (request) => {
      await removeMember(deps, actorOf(request), {
        tenantId: request.params.tenantId,
        targetAdminId: request.params.targetAdminId,
      });
      return { ok: true as const };
    },
  );

  app.post(
    '/tenants/:tenantId/api-keys',
    {
      config: session,
      schema: {
        tags,
        summary: 'Create an API key (developers and up); the key is shown only in this answer',
        params: TenantParams,
        body: CreateApiKeyBody,
        response: { 201: CreatedApiKeyBody, ...invalid, ...denied },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(await createApiKey(deps, actorOf(request), { tenantId: request.params.tenantId, body: request.body })),
  );

  app.get(
    '/tenants/:tenantId/api-keys',
    {
      config: session,
      schema: {
        tags,
        summary: 'Live API keys (never the key itself)',
        params: TenantParams,
        querystring: DefaultPageQuery,
        response: { 200: Paged(ApiKeyBody), ...invalid, ...denied },
      },
    },
    async (request) =>
      listApiKeys(deps, actorOf(request), { tenantId: request.params.tenantId, ...pageOf(request.query) }),
  );

  app.post(
    '/tenants/:tenantId/api-keys/:apiKeyId/rotate',
    {
      config: session,
      schema: {
        tags,
        summary: 'New secret for the key (same id and scopes); the old secret stops working at once',
        params: ApiKeyParams,
        response: { 201: CreatedApiKeyBody, 404: ErrorBody, ...denied },
      },
    },
    async (request, reply) =>
      reply.code(201).send(
        await rotateApiKey(deps, actorOf(request), {
          tenantId: request.params.tenantId,
          apiKeyId: request.params.apiKeyId,
        }),
      ),
  );

  app.delete(
    '/tenants/:tenantId/api-keys/:apiKeyId',
    {
      config: session,
      schema: {
        tags,
        summary: 'Revoke the key',
        params: ApiKeyParams,
        response: { 200: OkBody, 404: ErrorBody, ...denied },
      },
    },
    async (request) => {
      await revokeApiKey(deps, actorOf(request), {
        tenantId: request.params.tenantId,
        apiKeyId: request.params.apiKeyId,
      });
      return { ok: true as const };
    },
  );

  app.post(
    '/tenants/:tenantId/resume-sending',
    {
      config: session,
      schema: {
        tags,
        summary: 'Lift an automatic sending pause (owners, admins)',
        params: TenantParams,
        response: { 200: TenantBody, ...denied },
      },
    },
    async (request) => resumeSending(deps, actorOf(request), { tenantId: request.params.tenantId }),
  );

  app.post(
    '/tenants/:tenantId/block',
    {
      config: platformAdmin,
      schema: {
        tags,
        summary: "Block the tenant: its members' and keys' requests get 403 (platform admins)",
        params: TenantParams,
        response: { 200: TenantBody, 404: ErrorBody, ...denied },
      },
    },
    async (request) => blockTenant(deps, actorOf(request), { tenantId: request.params.tenantId }),
  );

  app.post(
    '/tenants/:tenantId/unblock',
    {
      config: platformAdmin,
      schema: {
        tags,
        summary: 'Lift a block (platform admins)',
        params: TenantParams,
        response: { 200: TenantBody, 404: ErrorBody, ...denied },
      },
    },
    async (request) => unblockTenant(deps, actorOf(request), { tenantId: request.params.tenantId }),
  );

  app.get(
    '/tenants/:tenantId/audit-events',
    {
      config: session,
      schema: {
        tags,
        summary: "Security audit log of the tenant and its members' sign-ins (owners). Beyond the interface spec.",
        params: TenantParams,
        querystring: DefaultPageQuery,
        response: { 200: Paged(AuditEventBody), ...invalid, ...denied },
      },
    },
    async (request) => {
      const actor = actorOf(request);
      await requireTenantRole(deps.db.sequelize, request.params.tenantId, actor, 'owner', { allowBlocked: true });
      return listTenantAuditEvents(deps, actor, { tenantId: request.params.tenantId, ...pageOf(request.query) });
    },
  );
}
