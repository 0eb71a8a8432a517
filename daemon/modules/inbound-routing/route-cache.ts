// The answer RCPT TO needs, "which route of which tenant takes this address?", kept in memory so the
// SMTP session answers at once. Every change to routes, token addresses or inbound domains is
// announced on `svc_inbound_routes` (triggers of migration 0470); this node LISTENs and forgets all it
// kept (changes are rare, a reload is one indexed read per domain). While the LISTEN connection is
// down, entries live ROUTE_CACHE_TTL_MS at most; a failed read is never kept, so a dead database
// gives the caller an error (SMTP 451), never a stale or empty answer taken for "no route".
// A reply address (`reply+…@<platform inbound domain>`) is answered by reply-address.ts before the
// routes, through the cached routes of its tenant's token address; its own reads are not kept.
import type { Sequelize } from 'sequelize';
import { cachedLoad, TtlCache } from '../../ttl-cache.ts';
import { listenWithRetry } from '../../db/listen.ts';
import { looksLikeReplyAddress } from '../../mail/addresses.ts';
import { matchRoute, splitAddress, type RoutedRecipient } from './matching.ts';
import { replyRecipient } from './reply-address.ts';
import {
  routesAtDomain,
  tenantOfInboundDomain,
  tenantOfToken,
  type InboundRouteRow,
  type RoutingTenant,
} from './sql/routes.ts';

export const ROUTES_CHANNEL = 'svc_inbound_routes';
/** The safety net while LISTEN is down (or on the embedded database, which has no second connection). */
export const ROUTE_CACHE_TTL_MS = 30_000;
const MAX_ENTRIES = 10_000;

interface Routing {
  tenant: RoutingTenant;
  routes: InboundRouteRow[];
}

export interface RouteCache {
  /** The route taking `address`, null when none does (or its tenant is blocked). Throws when the database fails. */
  resolve(address: string): Promise<RoutedRecipient | null>;
  close(): Promise<void>;
}

export async function createRouteCache(options: {
  sequelize: Sequelize;
  /** The platform inbound domain (tokens' addresses). */
  platformDomain: string;
  /** Where to LISTEN; null: TTL only. */
  listenUrl: string | null;
  /** Reply addresses' tags are checked with it (mail/addresses.ts). */
  linkSigningKey: Buffer;
  onListenError?: (error: Error) => void;
}): Promise<RouteCache> {
  const { sequelize, platformDomain } = options;
  const cache = new TtlCache<Promise<Routing | null>>(ROUTE_CACHE_TTL_MS, MAX_ENTRIES);

  async function load(tenant: RoutingTenant | null, domain: string): Promise<Routing | null> {
    if (!tenant || tenant.status !== 'active') return null;
    return { tenant, routes: await routesAtDomain(sequelize, tenant.tenant_id, domain) };
  }

  const listening = await listenWithRetry({
    url: options.listenUrl,
    channel: ROUTES_CHANNEL,
    onNotification: () => cache.clear(),
    onReset: () => cache.clear(),
    onError: options.onListenError,
  });

  const routeCache: RouteCache = {
    async resolve(address) {
      const parts = splitAddress(address);
      if (!parts) return null;
      let routing: Routing | null;
      let local = parts.local;
      if (parts.domain === platformDomain && looksLikeReplyAddress(local))
        return replyRecipient({ ...options, resolve: (asToken) => routeCache.resolve(asToken) }, local);
      if (parts.domain === platformDomain) {
        // Tokens are lower-case; a sender may upper-case the address, the tag keeps its case.
        const plus = local.indexOf('+');
        const token = (plus < 0 ? local : local.slice(0, plus)).toLowerCase();
        local = plus < 0 ? token : `${token}${local.slice(plus)}`;
        routing = await cachedLoad(cache, `t:${token}`, async () =>
          load(await tenantOfToken(sequelize, token), parts.domain),
        );
      } else {
        routing = await cachedLoad(cache, `d:${parts.domain}`, async () =>
          load(await tenantOfInboundDomain(sequelize, parts.domain), parts.domain),
        );
      }
      if (!routing) return null;
      const match = matchRoute(routing.routes, local);
      return match
        ? {
            ...match,
            tenantId: routing.tenant.tenant_id,
            plan: routing.tenant.plan,
            address: `${local}@${parts.domain}`,
          }
        : null;
    },
    async close() {
      await listening.close();
      cache.clear();
    },
  };
  return routeCache;
}
