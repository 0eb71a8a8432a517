// Turns a presented API key into its row, with a short in-process cache: the send path must not
// pay a database round trip per request for the key. Revoking or rotating a key calls forgetApiKey
// on this node; other nodes notice within API_KEY_CACHE_TTL_MS.
import { Op } from 'sequelize';
import { ApiKey, Tenant } from '../tenants/model.ts';
import { apiKeyMatches, apiKeyPrefixOf } from './api-key-format.ts';

export const API_KEY_CACHE_TTL_MS = 10_000;
const LAST_USED_WRITE_INTERVAL_MS = 60_000;

export interface ResolvedApiKey {
  id: string;
  tenantId: string;
  tenantStatus: 'active' | 'blocked';
  prefix: string;
  keyHash: string;
  scopes: string[];
  environment: 'live' | 'test';
}

interface CacheEntry {
  key: ResolvedApiKey | null;
  expiresAt: number;
}

const cache = new Map<string, CacheEntry>();
const lastUsedWritten = new Map<string, number>();

export function forgetApiKey(prefix: string): void {
  cache.delete(prefix);
}

export function forgetAllApiKeys(): void {
  cache.clear();
}

async function loadByPrefix(prefix: string): Promise<ResolvedApiKey | null> {
  const row = await ApiKey.findOne({ where: { prefix, revokedAt: { [Op.is]: null } } });
  if (!row) return null;
  const tenant = await Tenant.findByPk(row.tenantId, { attributes: ['status'] });
  if (!tenant) return null;
  return {
    id: row.id,
    tenantId: row.tenantId,
    tenantStatus: tenant.status,
    prefix: row.prefix,
    keyHash: row.keyHash,
    scopes: row.scopes,
    environment: row.environment,
  };
}

/** The key's row when the token is a live, unrevoked key; null otherwise. */
export async function resolveApiKey(token: string): Promise<ResolvedApiKey | null> {
  const prefix = apiKeyPrefixOf(token);
  if (prefix === null) return null;
  const now = Date.now();
  let entry = cache.get(prefix);
  if (!entry || entry.expiresAt <= now) {
    entry = { key: await loadByPrefix(prefix), expiresAt: now + API_KEY_CACHE_TTL_MS };
    if (cache.size > 10_000) cache.clear();
    cache.set(prefix, entry);
  }
  if (entry.key === null || !apiKeyMatches(token, entry.key.keyHash)) return null;
  noteKeyUsed(entry.key.id, now);
  return entry.key;
}

/** lastUsedAt is written at most once a minute per key, off the request's path. */
function noteKeyUsed(id: string, now: number): void {
  const last = lastUsedWritten.get(id) ?? 0;
  if (now - last < LAST_USED_WRITE_INTERVAL_MS) return;
  lastUsedWritten.set(id, now);
  ApiKey.update({ lastUsedAt: new Date(now) }, { where: { id } }).catch(() => {
    lastUsedWritten.delete(id);
  });
}
