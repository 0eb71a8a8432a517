// Who may call a route, declared next to the route in its `config.access`.
// The auth plugin reads it: credentials → principal → tenant → membership or key → scope → role.
import type { ApiKeyEnvironment, ApiKeyScope, MemberRole } from '../../shared/constants.ts';
import { MEMBER_ROLES } from '../../shared/constants.ts';

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

export type Principal =
  | { kind: 'admin'; adminId: string; isPlatformAdmin: boolean; sessionId?: string | null }
  | {
      kind: 'apiKey';
      apiKeyId: string;
      tenantId: string;
      /** The key's tenant status as cached with the key (blocked tenants are refused). */
      tenantStatus: 'active' | 'blocked';
      scopes: string[];
      environment: ApiKeyEnvironment;
      prefix: string;
    };

/**
 * What services receive: the tenant a request acts in and who acts. Services never see HTTP.
 * `testMode` is true for `svc_test_` keys: their mail is captured, never relayed, and not counted.
 */
export interface TenantContext {
  tenantId: string;
  adminId: string | null;
  apiKeyId: string | null;
  role: MemberRole | null;
  isPlatformAdmin: boolean;
  testMode: boolean;
  ip?: string;
}

/** The context of a request made with an API key (HTTP Bearer or SMTP AUTH): the key's tenant, no role. */
export function apiKeyTenantContext(key: { apiKeyId: string; tenantId: string; environment: ApiKeyEnvironment }, ip: string | undefined): TenantContext {
  return { tenantId: key.tenantId, adminId: null, apiKeyId: key.apiKeyId, role: null, isPlatformAdmin: false, testMode: key.environment === 'test', ip };
}

export function roleAtLeast(role: MemberRole, needed: MemberRole): boolean {
  return MEMBER_ROLES.indexOf(role) >= MEMBER_ROLES.indexOf(needed);
}

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
