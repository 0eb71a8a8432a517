// What the send pipeline needs to DKIM-sign a message: the verified domain's key in nodemailer's
// `dkim` option shape. Keys are kept briefly in memory so a burst of sends opens each key once.
import type { Sequelize } from 'sequelize';
import type { Secrets } from '../../secrets.ts';
import { Domain } from './model.ts';
import { openDkimPrivateKey } from './keys.ts';
import { domainAndParents, senderDomainOf } from './names.ts';

export interface DkimSigningOptions {
  domainName: string;
  keySelector: string;
  privateKey: string;
}

const CACHE_TTL_MS = 60_000;
const CACHE_MAX_ENTRIES = 1000;
const cache = new Map<string, { value: DkimSigningOptions | null; expiresAt: number }>();

// Every send asks which verified domain covers its sender, twice (accepting it, then delivering it):
// kept as briefly as the keys, and forgotten with them when the tenant's domains change.
const domainCache = new Map<string, { value: Domain | null; expiresAt: number }>();

/** The tenant's verified domain that covers `domain`: itself or, for a subdomain, its closest verified parent. Callers must not modify it. */
export async function findVerifiedDomain(_sequelize: Sequelize, tenantId: string, domain: string): Promise<Domain | null> {
  const normalized = senderDomainOf(domain);
  if (normalized === null) return null;
  const key = `${tenantId} ${normalized}`;
  const hit = domainCache.get(key);
  if (hit && hit.expiresAt > Date.now()) return hit.value;
  const candidates = await Domain.findAll({ where: { tenantId, name: domainAndParents(normalized), status: 'verified' } });
  candidates.sort((a, b) => b.name.length - a.name.length);
  const value = candidates[0] ?? null;
  if (domainCache.size >= CACHE_MAX_ENTRIES) domainCache.clear();
  domainCache.set(key, { value, expiresAt: Date.now() + CACHE_TTL_MS });
  return value;
}

/**
 * nodemailer `dkim` options for mail from `fromDomain` (a domain or a whole address), or null when the
 * tenant has no verified domain covering it. A subdomain is signed with its verified parent's key
 * (d= the parent), which DMARC's relaxed alignment accepts.
 */
export async function dkimFor(sequelize: Sequelize, secrets: Pick<Secrets, 'encryptionKey'>, tenantId: string, fromDomain: string): Promise<DkimSigningOptions | null> {
  const key = `${tenantId} ${fromDomain.toLowerCase()}`;
  const hit = cache.get(key);
  if (hit && hit.expiresAt > Date.now()) return hit.value;
  const domain = await findVerifiedDomain(sequelize, tenantId, fromDomain);
  const value = domain
    ? { domainName: domain.name, keySelector: domain.dkimSelector, privateKey: openDkimPrivateKey(secrets.encryptionKey, domain.dkimPrivateKeySealed) }
    : null;
  if (cache.size >= CACHE_MAX_ENTRIES) cache.clear();
  cache.set(key, { value, expiresAt: Date.now() + CACHE_TTL_MS });
  return value;
}

/** Called when a tenant's domains change, so this process signs with the new state at once. */
export function forgetDkimKeys(tenantId: string): void {
  for (const key of cache.keys()) if (key.startsWith(`${tenantId} `)) cache.delete(key);
  for (const key of domainCache.keys()) if (key.startsWith(`${tenantId} `)) domainCache.delete(key);
}
