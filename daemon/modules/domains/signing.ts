// What the send pipeline needs to DKIM-sign a message: the verified domain's key in nodemailer's
// `dkim` option shape. Keys are kept briefly in memory so a burst of sends opens each key once.
import type { DkimSigningOptions } from '../../mail/compose.ts';
import type { DkimKeys } from '../../mail/resources.ts';
import type { Secrets } from '../../secrets.ts';
import { TtlCache } from '../../ttl-cache.ts';
import type { Sequelize } from 'sequelize';
import type { Domain } from './model.ts';
import { modelsOf } from '../models.ts';
import { openDkimSigningKey } from './keys.ts';
import { domainAndParents, senderDomainOf } from '../../mail/domain-names.ts';

const CACHE_TTL_MS = 60_000;
const CACHE_MAX_ENTRIES = 1000;

/**
 * The verified domains and opened DKIM keys of the tenants this app (or worker thread) sends for,
 * each kept for CACHE_TTL_MS. Created by buildApp, the SMTP edge and each worker thread
 * (modules/mail-resources.ts); `forget` drops a tenant's entries when its domains change here.
 */
export class DkimSigningCache implements DkimKeys {
  private readonly keys = new TtlCache<DkimSigningOptions | null>(CACHE_TTL_MS, CACHE_MAX_ENTRIES);
  // Every send asks which verified domain covers its sender, twice (accepting it, then delivering it):
  // kept as briefly as the keys, and forgotten with them when the tenant's domains change.
  private readonly domains = new TtlCache<Domain | null>(CACHE_TTL_MS, CACHE_MAX_ENTRIES);

  constructor(
    private readonly secrets: Pick<Secrets, 'encryptionKey'>,
    /** The connection the domains are read on (its models, modelsOf). */
    private readonly sequelize: Sequelize,
  ) {}

  /** The tenant's verified domain that covers `domain`: itself or, for a subdomain, its closest verified parent. Callers must not modify it. */
  async verifiedDomain(tenantId: string, domain: string): Promise<Domain | null> {
    const normalized = senderDomainOf(domain);
    if (normalized === null) return null;
    const key = `${tenantId} ${normalized}`;
    const hit = this.domains.get(key);
    if (hit !== undefined) return hit;
    const candidates = await modelsOf(this.sequelize).Domain.findAll({
      where: { tenantId, name: domainAndParents(normalized), status: 'verified' },
    });
    candidates.sort((a, b) => b.name.length - a.name.length);
    return this.domains.set(key, candidates[0] ?? null);
  }

  /**
   * nodemailer `dkim` options for mail from `fromDomain` (a domain or a whole address), or null when the
   * tenant has no verified domain covering it. A subdomain is signed with its verified parent's key
   * (d= the parent), which DMARC's relaxed alignment accepts.
   */
  async dkimFor(tenantId: string, fromDomain: string): Promise<DkimSigningOptions | null> {
    const key = `${tenantId} ${fromDomain.toLowerCase()}`;
    const hit = this.keys.get(key);
    if (hit !== undefined) return hit;
    const domain = await this.verifiedDomain(tenantId, fromDomain);
    const value = domain
      ? {
          domainName: domain.name,
          keySelector: domain.dkimSelector,
          privateKey: openDkimSigningKey(this.secrets.encryptionKey, domain.dkimPrivateKeySealed),
        }
      : null;
    return this.keys.set(key, value);
  }

  /** Called when a tenant's domains change, so this app or thread signs with the new state at once. */
  forget(tenantId: string): void {
    this.keys.deletePrefixed(`${tenantId} `);
    this.domains.deletePrefixed(`${tenantId} `);
  }
}
