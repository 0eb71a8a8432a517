// Turns a presented API key into its row, through the app's tenant-state cache (created in
// buildApp): the send path must not pay a database round trip per request for the key. Revoking or
// rotating a key, or blocking its tenant, drops the cached entry on every node (see
// tenants/state-cache.ts); the send statement checks the key again (emails/insert-accepted.ts).
import type { ResolvedApiKey, TenantStateCache } from '../tenants/state-cache.ts';
import { apiKeyMatches, apiKeyPrefixOf } from './api-key-format.ts';

export type { ResolvedApiKey };

/** The key's row when the token is a live, unrevoked key; null otherwise. */
export async function resolveApiKey(cache: TenantStateCache, token: string): Promise<ResolvedApiKey | null> {
  const prefix = apiKeyPrefixOf(token);
  if (prefix === null) return null;
  const key = await cache.apiKey(prefix);
  if (key === null || !apiKeyMatches(token, key.keyHash)) return null;
  cache.noteKeyUsed(key.id);
  return key;
}
