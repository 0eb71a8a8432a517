// Who may call a route, declared next to the route in its `config.access`, and what a route reads of
// who called it (tenantOf, adminIdOf, principalOf). The auth plugin (plugins/auth.ts) fills it in:
// credentials → principal → tenant → membership or key → scope → role. Below modules/ so route files
// need nothing from plugins/ (the folders' layers: README.md's Layout, held by test/import-cycles.test.ts).
import type { FastifyRequest } from 'fastify';
import type { ApiKeyScope, MemberRole } from '../shared/constants.ts';
import type { Principal, TenantContext } from './context.ts';
import { UnauthorizedError } from './errors.ts';

export type Access =
  /** No credentials needed (health, public auth, tracking, unsubscribe, inbound receivers). */
  | { kind: 'public' }
  /** Any valid bearer (JWT or API key), no tenant needed (e.g. /health/queues). */
  | { kind: 'bearer' }
  /** An admin session (JWT). API keys are refused with 403. */
  | { kind: 'session'; tenant: boolean; role?: MemberRole; platformAdmin?: boolean }
  /** An API key carrying `scope`, or an admin session that is a member of the tenant. */
  | { kind: 'keyOrSession'; scope: ApiKeyScope; role?: MemberRole };

export const access = {
  public: (): Access => ({ kind: 'public' }),
  bearer: (): Access => ({ kind: 'bearer' }),
  /** Admin session. `tenant: false` for routes outside a tenant (/auth/me, /tenants list, platform). */
  session: (options: { tenant?: boolean; role?: MemberRole; platformAdmin?: boolean } = {}): Access => ({
    kind: 'session',
    tenant: options.tenant ?? true,
    role: options.role,
    platformAdmin: options.platformAdmin,
  }),
  keyOrSession: (scope: ApiKeyScope, options: { role?: MemberRole } = {}): Access => ({
    kind: 'keyOrSession',
    scope,
    role: options.role,
  }),
};

/**
 * Route config for the sign-in family: 15 attempts per 15 minutes per address (AUTH_RATE_LIMIT_MAX per
 * AUTH_RATE_LIMIT_WINDOW_MS), counted by the rate-limit plugin (plugins/rate-limit.ts).
 */
export function authRateLimit(options: { authMax: number; authWindowMs: number }) {
  return {
    max: options.authMax,
    timeWindow: options.authWindowMs,
    keyGenerator: (request: FastifyRequest) => `auth:${request.ip}`,
  };
}

/** Viewers read; changing anything takes a developer unless the route asks for more. */
export function defaultRoleFor(method: string): MemberRole {
  return method === 'GET' || method === 'HEAD' ? 'viewer' : 'developer';
}

/** The tenant context of a tenant route; the access rule guarantees it is there. */
export function tenantOf(request: FastifyRequest): TenantContext {
  if (!request.tenant) throw new Error(`route ${request.routeOptions.url} has no tenant access rule`);
  return request.tenant;
}

/** The signed-in admin's id on a session route. */
export function adminIdOf(request: FastifyRequest): string {
  const principal = request.principal;
  if (principal?.kind !== 'admin') throw new UnauthorizedError();
  return principal.adminId;
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new UnauthorizedError();
  return request.principal;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
  interface FastifyRequest {
    principal: Principal | null;
    /** Set by the auth plugin when credentials were sent but are not valid. */
    authFailure: string | null;
    tenant: TenantContext | null;
  }
}
