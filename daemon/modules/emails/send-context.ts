// What composing and relaying a send needs besides its log: the DKIM key and Return-Path of the
// verified domain that covers the sender, the project's own relay, and whether the tenant's sends
// carry a reply address (its inbound setting). These change rarely (a domain
// verified or removed, a project's SMTP settings edited), so the drain keeps them for a minute per
// thread, as signing.ts does for the API: read on plain `pg`, one statement per miss, no Sequelize.
// A change reaches the worker threads within CACHE_TTL_MS.
import { declare, type Sql } from '../../db/sql.ts';
import { unseal } from '../../crypto/sealed.ts';
import type { Secrets } from '../../secrets.ts';
import type { SmtpSettings } from '../../mail/transport.ts';
import { openDkimSigningKey } from '../domains/keys.ts';
import { domainAndParents, senderDomainOf } from '../../mail/domain-names.ts';
import { returnPathName } from '../../mail/addresses.ts';
import type { DkimSigningOptions } from '../../mail/compose.ts';
import { cachedLoad, TtlCache } from '../../ttl-cache.ts';
import { replyAddressesOn } from '../inbound-routing/sql/addresses.ts';

const CACHE_TTL_MS = 60_000;
const CACHE_MAX_ENTRIES = 1000;

export interface SenderSigning {
  dkim: DkimSigningOptions | null;
  /** The Return-Path domain (bounces routed through the customer's domain), or null. */
  returnPath: string | null;
}

// The closest verified domain covering the sender (itself or a parent), and whether the platform
// routes bounces through customer domains at all.
const VERIFIED_SENDER_DOMAIN = declare(
  'drain_verified_sender_domain',
  `
  SELECT d.name, d.dkim_selector, d.dkim_private_key_sealed,
         d.record_checks->'returnPath'->>'status' = 'verified' AS return_path_verified,
         EXISTS (SELECT 1 FROM platform_settings p
                  WHERE p.key = 'returnPathDomain' AND jsonb_typeof(p.value) = 'string' AND p.value <> '""'::jsonb) AS platform_return_path
    FROM domains d
   WHERE d.tenant_id = $1 AND d.name = ANY($2::text[]) AND d.status = 'verified'
   ORDER BY length(d.name) DESC
   LIMIT 1`,
);

const PROJECT_RELAY = declare(
  'drain_project_relay',
  `
  SELECT smtp_host, smtp_port, smtp_secure, smtp_user, smtp_pass_sealed FROM projects WHERE id = $1 AND tenant_id = $2`,
);

/** Per worker thread: what one drain loop (or the sync send path) looks up, kept for a minute. */
export interface SendContextCache {
  signing(tenantId: string, fromAddress: string): Promise<SenderSigning>;
  /** The project's relay; null when it has none (the default relay applies). */
  projectRelay(tenantId: string, projectId: string): Promise<SmtpSettings | null>;
  /** Whether the tenant's sends carry a reply address (docs/inbound.md "Reply addresses"). */
  replyAddresses(tenantId: string): Promise<boolean>;
}

export function createSendContextCache(sql: Sql, secrets: Pick<Secrets, 'encryptionKey'>): SendContextCache {
  // Promises are kept, so a batch of sends from one domain costs one statement (ttl-cache.ts).
  const signings = new TtlCache<Promise<SenderSigning>>(CACHE_TTL_MS, CACHE_MAX_ENTRIES);
  const relays = new TtlCache<Promise<SmtpSettings | null>>(CACHE_TTL_MS, CACHE_MAX_ENTRIES);
  const replySettings = new TtlCache<Promise<boolean>>(CACHE_TTL_MS, CACHE_MAX_ENTRIES);
  return {
    signing(tenantId, fromAddress) {
      const domain = senderDomainOf(fromAddress);
      if (domain === null) return Promise.resolve({ dkim: null, returnPath: null });
      return cachedLoad(signings, `${tenantId} ${domain}`, async () => {
        const [row] = await sql.rows<{
          name: string;
          dkim_selector: string;
          dkim_private_key_sealed: string;
          return_path_verified: boolean | null;
          platform_return_path: boolean;
        }>(VERIFIED_SENDER_DOMAIN, [tenantId, domainAndParents(domain)]);
        if (!row) return { dkim: null, returnPath: null };
        return {
          dkim: {
            domainName: row.name,
            keySelector: row.dkim_selector,
            privateKey: openDkimSigningKey(secrets.encryptionKey, row.dkim_private_key_sealed),
          },
          returnPath: row.return_path_verified && row.platform_return_path ? returnPathName(row.name) : null,
        };
      });
    },
    projectRelay(tenantId, projectId) {
      return cachedLoad(relays, `${tenantId} ${projectId}`, async () => {
        const [row] = await sql.rows<{
          smtp_host: string | null;
          smtp_port: number | null;
          smtp_secure: boolean;
          smtp_user: string | null;
          smtp_pass_sealed: string | null;
        }>(PROJECT_RELAY, [projectId, tenantId]);
        if (!row || !row.smtp_host) return null;
        return {
          host: row.smtp_host,
          port: row.smtp_port ?? 587,
          secure: row.smtp_secure,
          user: row.smtp_user,
          pass: row.smtp_pass_sealed ? unseal(secrets.encryptionKey, row.smtp_pass_sealed) : null,
        };
      });
    },
    replyAddresses(tenantId) {
      return cachedLoad(replySettings, tenantId, () => replyAddressesOn(sql, tenantId));
    },
  };
}
