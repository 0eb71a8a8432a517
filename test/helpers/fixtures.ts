// Rows a test needs, written straight to the database, and credentials for them.
// Tests of the auth endpoints themselves go through HTTP instead.
import { randomUUID } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import type { App } from '../../daemon/app-types.ts';
import type { Secrets } from '../../daemon/secrets.ts';
import { generateDkimKey } from '../../daemon/modules/domains/keys.ts';
import { Admin } from '../../daemon/modules/auth/model.ts';
import { ApiKey, Membership, Tenant } from '../../daemon/modules/tenants/model.ts';
import { generateApiKey } from '../../daemon/modules/auth/api-key-format.ts';
import type { AccessTokenClaims } from '../../daemon/context.ts';
import { API_KEY_SCOPES, type ApiKeyEnvironment, type MemberRole } from '../../shared/constants.ts';

export interface AdminFixture {
  id: string;
  email: string;
  token: string;
}

export async function createAdmin(
  app: App,
  options: { email?: string; platformAdmin?: boolean } = {},
): Promise<AdminFixture> {
  const email = options.email ?? `admin-${randomUUID().slice(0, 8)}@example.test`;
  const admin = await Admin.create({
    email,
    passwordHash: 'fixture-has-no-password',
    isPlatformAdmin: options.platformAdmin ?? false,
    emailVerifiedAt: new Date(),
  });
  const claims: AccessTokenClaims = { sub: admin.id, typ: 'access', pa: admin.isPlatformAdmin };
  return { id: admin.id, email, token: app.jwt.sign(claims) };
}

export async function createTenant(ownerId: string, name = 'Acme'): Promise<string> {
  const tenant = await Tenant.create({ name });
  await Membership.create({ tenantId: tenant.id, adminId: ownerId, role: 'owner' });
  return tenant.id;
}

export async function addMember(tenantId: string, adminId: string, role: MemberRole): Promise<void> {
  await Membership.create({ tenantId, adminId, role });
}

export async function createApiKey(
  tenantId: string,
  options: { scopes?: string[]; environment?: ApiKeyEnvironment } = {},
): Promise<{ id: string; key: string }> {
  const environment = options.environment ?? 'live';
  const generated = generateApiKey(environment);
  const row = await ApiKey.create({
    tenantId,
    name: 'fixture key',
    prefix: generated.prefix,
    keyHash: generated.keyHash,
    scopes: options.scopes ?? [...API_KEY_SCOPES],
    environment,
  });
  return { id: row.id, key: generated.key };
}

/** An admin who owns a fresh tenant, and a live key of that tenant with every scope. */
export async function createWorld(app: App) {
  const owner = await createAdmin(app);
  const tenantId = await createTenant(owner.id);
  const key = await createApiKey(tenantId);
  const asOwner = { authorization: `Bearer ${owner.token}`, 'x-tenant-id': tenantId };
  const asKey = { authorization: `Bearer ${key.key}` };
  return { owner, tenantId, key, asOwner, asKey };
}

/**
 * A verified sending domain with a real DKIM key, as if its DNS had just been checked
 * (last_checked_at = now, so the maintenance thread's daily re-check leaves it alone).
 */
export async function addVerifiedDomain(
  sequelize: Sequelize,
  secrets: Secrets,
  tenantId: string,
  name = 'acme.test',
): Promise<void> {
  const key = await generateDkimKey(secrets.encryptionKey);
  await sequelize.query(
    `INSERT INTO domains (tenant_id, name, status, dkim_selector, dkim_public_key, dkim_private_key_sealed, verified_at, last_checked_at)
     VALUES (:tenantId, :name, 'verified', :selector, :publicKey, :sealed, now(), now())`,
    {
      replacements: { tenantId, name, selector: key.selector, publicKey: key.publicKey, sealed: key.privateKeySealed },
    },
  );
}
