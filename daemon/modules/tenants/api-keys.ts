// API keys of a tenant: created and rotated by developers and up; the whole key is returned once
// and only its hash is stored. Rotation keeps the id, name and scopes and kills the old secret
// at once; revocation keeps the row (with revokedAt) for the audit trail.
import { Op, type Sequelize, type Transaction } from 'sequelize';
import type { ApiKey } from './model.ts';
import { modelsOf } from '../models.ts';
import { requireTenantRole, type Actor, type TenantDeps } from './service.ts';
import { generateApiKey } from '../auth/api-key-format.ts';
import { recordAudit } from '../audit/service.ts';
import { NotFoundError, ValidationError } from '../../errors.ts';
import { API_KEY_SCOPES, type ApiKeyEnvironment, type ApiKeyScope } from '../../../shared/constants.ts';
import type { ApiKeyBody, CreatedApiKeyBody } from '../../../shared/schemas/tenants.ts';
import { findPage } from '../../db/paging.ts';

function apiKeyBody(row: ApiKey): ApiKeyBody {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    environment: row.environment,
    createdBy: row.createdBy,
    lastUsedAt: row.lastUsedAt ? row.lastUsedAt.toISOString() : null,
    createdAt: row.createdAt.toISOString(),
  };
}

function checkScopes(scopes: string[]): ApiKeyScope[] {
  const unknown = scopes.filter((scope) => !(API_KEY_SCOPES as readonly string[]).includes(scope));
  if (unknown.length) {
    throw new ValidationError(
      `Unknown scope ${unknown.map((s) => `"${s}"`).join(', ')}; the scopes are ${API_KEY_SCOPES.join(', ')}.`,
      [{ field: 'body.scopes', message: 'contains an unknown scope' }],
    );
  }
  return [...new Set(scopes)] as ApiKeyScope[];
}

export async function createApiKey(
  deps: TenantDeps,
  actor: Actor,
  input: { tenantId: string; body: { name: string; scopes: string[]; environment?: ApiKeyEnvironment } },
): Promise<CreatedApiKeyBody> {
  const { sequelize } = deps.db;
  const { tenantId, body } = input;
  const scopes = checkScopes(body.scopes);
  const environment = body.environment ?? 'live';
  return sequelize.transaction(async (transaction) => {
    await requireTenantRole(deps.db.sequelize, tenantId, actor, 'developer', { transaction });
    const generated = generateApiKey(environment);
    const row = await modelsOf(sequelize).ApiKey.create(
      {
        tenantId,
        name: body.name.trim(),
        prefix: generated.prefix,
        keyHash: generated.keyHash,
        scopes,
        environment,
        createdBy: actor.adminId,
      },
      { transaction },
    );
    await recordAudit(
      deps.db.sequelize,
      {
        action: 'api_key.created',
        tenantId,
        adminId: actor.adminId,
        ip: actor.ip,
        target: row.id,
        metadata: { prefix: row.prefix, scopes, environment },
      },
      transaction,
    );
    return { ...apiKeyBody(row), key: generated.key };
  });
}

/** Live (unrevoked) keys, newest first; never the key or its hash. */
export async function listApiKeys(
  deps: TenantDeps,
  actor: Actor,
  input: { tenantId: string; page: number; limit: number },
) {
  const { tenantId, page, limit } = input;
  await requireTenantRole(deps.db.sequelize, tenantId, actor, 'viewer', { allowBlocked: true });
  const where = { tenantId, revokedAt: { [Op.is]: null } };
  return findPage(
    modelsOf(deps.db.sequelize).ApiKey,
    {
      where,
      order: [
        ['createdAt', 'DESC'],
        ['id', 'ASC'],
      ],
    },
    { page, limit },
    (rows) => rows.map(apiKeyBody),
  );
}

async function liveKeyOf(
  sequelize: Sequelize,
  tenantId: string,
  apiKeyId: string,
  transaction: Transaction,
): Promise<ApiKey> {
  const row = await modelsOf(sequelize).ApiKey.findOne({
    where: { id: apiKeyId, tenantId, revokedAt: { [Op.is]: null } },
    transaction,
    lock: transaction.LOCK.UPDATE,
  });
  if (!row) throw new NotFoundError('API key');
  return row;
}

export async function rotateApiKey(
  deps: TenantDeps,
  actor: Actor,
  input: { tenantId: string; apiKeyId: string },
): Promise<CreatedApiKeyBody> {
  const { sequelize } = deps.db;
  const { tenantId, apiKeyId } = input;
  // The API nodes drop the old prefix from their caches (tenants/state-cache.ts).
  const { body } = await sequelize.transaction(async (transaction) => {
    await requireTenantRole(deps.db.sequelize, tenantId, actor, 'developer', { transaction });
    const row = await liveKeyOf(deps.db.sequelize, tenantId, apiKeyId, transaction);
    const oldPrefix = row.prefix;
    const generated = generateApiKey(row.environment);
    await row.update({ prefix: generated.prefix, keyHash: generated.keyHash, lastUsedAt: null }, { transaction });
    await recordAudit(
      deps.db.sequelize,
      {
        action: 'api_key.rotated',
        tenantId,
        adminId: actor.adminId,
        ip: actor.ip,
        target: row.id,
        metadata: { oldPrefix, prefix: generated.prefix },
      },
      transaction,
    );
    return { body: { ...apiKeyBody(row), key: generated.key }, oldPrefix };
  });
  return body;
}

export async function revokeApiKey(
  deps: TenantDeps,
  actor: Actor,
  input: { tenantId: string; apiKeyId: string },
): Promise<void> {
  const { sequelize } = deps.db;
  const { tenantId, apiKeyId } = input;
  // The API nodes drop the key from their caches (tenants/state-cache.ts).
  await sequelize.transaction(async (transaction) => {
    await requireTenantRole(deps.db.sequelize, tenantId, actor, 'developer', { transaction });
    const row = await liveKeyOf(deps.db.sequelize, tenantId, apiKeyId, transaction);
    await row.update({ revokedAt: new Date() }, { transaction });
    await recordAudit(
      deps.db.sequelize,
      {
        action: 'api_key.revoked',
        tenantId,
        adminId: actor.adminId,
        ip: actor.ip,
        target: row.id,
        metadata: { prefix: row.prefix },
      },
      transaction,
    );
  });
}
