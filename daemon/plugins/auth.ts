// One auth path for the whole API. onRequest resolves who is calling (without failing, so the
// rate limiter can key on it and count the attempt); preParsing enforces the route's
// `config.access`: after the rate limiter, before a byte of the body is read. A request without
// valid credentials, scope or membership costs no body read and no parse (docs/security.md;
// test/auth-before-body.test.ts fails if this ever moves after parsing).
import fp from 'fastify-plugin';
import fastifyJwt from '@fastify/jwt';
import type { Sequelize } from 'sequelize';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ForbiddenError, UnauthorizedError, ValidationError } from '../errors.ts';
import { findMembershipWithTenantStatus } from '../modules/tenants/model.ts';
import { looksLikeApiKey } from '../modules/auth/api-key-format.ts';
import { resolveApiKey } from '../modules/auth/credentials.ts';
import type { TenantStateCache } from '../modules/tenants/state-cache.ts';
import { sessionIsLive } from '../modules/auth/tokens.ts';
import { TENANT_HEADER, type MemberRole } from '../../shared/constants.ts';
import { apiKeyTenantContext, roleAtLeast, type AccessTokenClaims } from '../context.ts';
import { ACCESS_TOKEN_TTL_SECONDS } from '../modules/auth/token-lifetimes.ts';
import { defaultRoleFor, type Access } from '../access.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function bearerOf(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : '';
}

/** Where a credential is checked: the API keys' and tenants' cache, and the connection the sign-ins are kept in. */
export interface CredentialSources {
  cache: TenantStateCache;
  sequelize: Sequelize;
}

async function resolvePrincipal(
  app: FastifyInstance,
  sources: CredentialSources,
  request: FastifyRequest,
): Promise<void> {
  const { cache } = sources;
  const token = bearerOf(request);
  if (token === null) return;
  if (token === '') {
    request.authFailure = 'The Authorization header must be "Bearer <token or API key>".';
    return;
  }
  if (looksLikeApiKey(token)) {
    const key = await resolveApiKey(cache, token);
    if (!key) {
      request.authFailure = 'The API key is invalid or has been revoked.';
      return;
    }
    request.principal = {
      kind: 'apiKey',
      apiKeyId: key.id,
      tenantId: key.tenantId,
      tenantStatus: key.tenantStatus,
      scopes: key.scopes,
      environment: key.environment,
      prefix: key.prefix,
    };
    return;
  }
  let claims: AccessTokenClaims;
  try {
    claims = app.jwt.verify<AccessTokenClaims>(token);
    if (claims.typ !== 'access' || typeof claims.sub !== 'string') throw new Error('not an access token');
  } catch (error) {
    const expired = (error as { code?: string }).code === 'FAST_JWT_EXPIRED';
    request.authFailure = expired
      ? 'The access token has expired: refresh it with POST /auth/refresh or sign in again.'
      : 'The access token is invalid.';
    return;
  }
  // Signing out (logout, logout-all, password change or reset, refresh-token reuse) ends the
  // sign-in's access tokens at once, not 15 minutes later.
  if (typeof claims.sid === 'string' && !(await sessionIsLive(sources.sequelize, claims.sid))) {
    request.authFailure = 'This sign-in has ended (signed out or revoked): sign in again.';
    return;
  }
  request.principal = {
    kind: 'admin',
    adminId: claims.sub,
    isPlatformAdmin: claims.pa === true,
    sessionId: typeof claims.sid === 'string' ? claims.sid : null,
  };
}

/**
 * Whether the credential a request came with still holds now: the API key not revoked, the access
 * token not expired, its sign-in not ended. Long-lived answers (the log stream) ask this again while
 * they run, so revoking a key or signing out ends them too.
 */
export async function credentialStillValid(
  app: FastifyInstance,
  sources: CredentialSources,
  request: FastifyRequest,
): Promise<boolean> {
  const probe = { headers: request.headers, principal: undefined, authFailure: undefined } as unknown as FastifyRequest;
  await resolvePrincipal(app, sources, probe);
  return probe.principal !== undefined && probe.principal !== null;
}

function headerTenantId(request: FastifyRequest): string | null {
  const raw = request.headers[TENANT_HEADER];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined || value === '') return null;
  if (!UUID.test(value)) {
    throw new ValidationError('X-Tenant-Id must be a tenant id (a UUID).', [
      { field: 'headers.x-tenant-id', message: 'must be a UUID' },
    ]);
  }
  return value.toLowerCase();
}

export const BLOCKED_MESSAGE =
  'This tenant has been blocked by the platform administrator; contact support to lift the block.';

async function enforce(request: FastifyRequest, rule: Access): Promise<void> {
  if (rule.kind === 'public') return;
  const principal = request.principal;
  if (!principal) throw new UnauthorizedError(request.authFailure ?? undefined);
  if (rule.kind === 'bearer') return;

  if (principal.kind === 'apiKey') {
    if (rule.kind === 'session') {
      throw new ForbiddenError(
        'This endpoint needs an admin session (JWT); API keys are not accepted here.',
        'SESSION_REQUIRED',
      );
    }
    const requested = headerTenantId(request);
    if (requested !== null && requested !== principal.tenantId) {
      throw new ForbiddenError('This API key belongs to another tenant than X-Tenant-Id names.', 'TENANT_MISMATCH');
    }
    if (!principal.scopes.includes(rule.scope)) {
      throw new ForbiddenError(`This API key lacks the "${rule.scope}" scope.`, 'INSUFFICIENT_SCOPE');
    }
    if (principal.tenantStatus === 'blocked') throw new ForbiddenError(BLOCKED_MESSAGE, 'TENANT_BLOCKED');
    request.tenant = apiKeyTenantContext(principal, request.ip);
    return;
  }

  if (rule.kind === 'session' && rule.platformAdmin && !principal.isPlatformAdmin) {
    throw new ForbiddenError('Only platform administrators may do this.', 'PLATFORM_ADMIN_REQUIRED');
  }
  const needsTenant = rule.kind === 'keyOrSession' || rule.tenant;
  if (!needsTenant) return;
  const tenantId = headerTenantId(request);
  if (tenantId === null) {
    throw new ValidationError('This endpoint acts inside a tenant: send its id in the X-Tenant-Id header.', [
      { field: 'headers.x-tenant-id', message: 'is required' },
    ]);
  }
  const membership = await findMembershipWithTenantStatus(tenantId, principal.adminId);
  if (!membership) {
    throw new ForbiddenError('You are not a member of this tenant.', 'NOT_A_MEMBER');
  }
  if (membership.tenantStatus === 'blocked' && !principal.isPlatformAdmin)
    throw new ForbiddenError(BLOCKED_MESSAGE, 'TENANT_BLOCKED');
  const needed: MemberRole = rule.role ?? defaultRoleFor(request.method);
  if (!roleAtLeast(membership.role, needed)) {
    throw new ForbiddenError(`This needs the ${needed} role or higher; you are ${membership.role}.`, 'ROLE_REQUIRED');
  }
  request.tenant = {
    tenantId,
    adminId: principal.adminId,
    apiKeyId: null,
    role: membership.role,
    isPlatformAdmin: principal.isPlatformAdmin,
    testMode: false,
    ip: request.ip,
  };
}

async function authPlugin(app: FastifyInstance, options: { jwtSecret: string } & CredentialSources): Promise<void> {
  await app.register(fastifyJwt, {
    secret: options.jwtSecret,
    sign: { algorithm: 'HS256', expiresIn: ACCESS_TOKEN_TTL_SECONDS },
    // Pinned: a token claiming "none" or another algorithm is refused before its signature is read.
    verify: { algorithms: ['HS256'] },
  });
  app.decorateRequest('principal', null);
  app.decorateRequest('authFailure', null);
  app.decorateRequest('tenant', null);
  app.addHook('onRequest', async (request) => {
    await resolvePrincipal(app, options, request);
  });
  app.addHook('preParsing', async (request) => {
    if (request.is404) return;
    const rule = request.routeOptions.config?.access;
    // A route that forgot to declare its access is closed, not open.
    await enforce(request, rule ?? { kind: 'session', tenant: true });
  });
}

export default fp(authPlugin, { name: 'auth' });
