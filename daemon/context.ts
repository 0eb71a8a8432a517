// Who a service call acts for. Routes build these from the request (plugins/auth.ts), the SMTP
// server and the workers build them too; services take them and never see HTTP or the plugins.
import type { ApiKeyEnvironment, MemberRole } from '../shared/constants.ts';
import { MEMBER_ROLES } from '../shared/constants.ts';

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

/** What platform and account services receive outside a tenant: the signed-in admin who acts. */
export interface AdminContext {
  adminId: string;
}

/** The context of a request made with an API key (HTTP Bearer or SMTP AUTH): the key's tenant, no role. */
export function apiKeyTenantContext(
  key: { apiKeyId: string; tenantId: string; environment: ApiKeyEnvironment },
  ip: string | undefined,
): TenantContext {
  return {
    tenantId: key.tenantId,
    adminId: null,
    apiKeyId: key.apiKeyId,
    role: null,
    isPlatformAdmin: false,
    testMode: key.environment === 'test',
    ip,
  };
}

export function roleAtLeast(role: MemberRole, needed: MemberRole): boolean {
  return MEMBER_ROLES.indexOf(role) >= MEMBER_ROLES.indexOf(needed);
}

/** What a signed-in admin's access token (a JWT) carries. */
export interface AccessTokenClaims {
  sub: string;
  typ: 'access';
  /** Platform admin at the time the token was issued. */
  pa: boolean;
  /** The sign-in (refresh-token family) this token belongs to; logout and change-password use it. */
  sid?: string;
}
