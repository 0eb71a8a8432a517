// Who may call a route, declared next to the route in its `config.access`.
// The auth plugin reads it: credentials → principal → tenant → membership or key → scope → role.
import type { ApiKeyScope, MemberRole } from '../../shared/constants.ts';
import type { Principal, TenantContext } from '../context.ts';

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

/** Viewers read; changing anything takes a developer unless the route asks for more. */
export function defaultRoleFor(method: string): MemberRole {
  return method === 'GET' || method === 'HEAD' ? 'viewer' : 'developer';
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
