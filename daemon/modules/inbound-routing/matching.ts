// Which route takes an envelope recipient (docs/inbound.md "Routes"): routes are tried in ascending
// position and the first enabled one that matches decides. Three shapes, no regular expressions:
// `local@domain` (exact), `local+*@domain` (that local part, alone or with any `+tag`, the tag passed
// on as mailboxHash) and `*@domain` (any local part; a `+tag` is passed on too). The domain compares
// case-insensitively, the local part exactly (RFC 5321 §2.4), but for the `+` tag.
import { normalizeDomainName } from '../../mail/domain-names.ts';
import type { InboundRouteRow } from './sql/routes.ts';

export interface RouteMatch {
  route: InboundRouteRow;
  mailboxHash: string | null;
}

/** What RCPT TO decided for one recipient of a tenant (route-cache.ts), kept until the message is stored. */
export interface RoutedRecipient extends Omit<RouteMatch, 'route'> {
  /** null: a reply address no route of its tenant takes, stored without one (reply-address.ts). */
  route: InboundRouteRow | null;
  tenantId: string;
  plan: string;
  address: string;
  /** The send a reply address names (its tag held): the reply is linked to it (receive.ts). */
  repliesTo?: { emailId: string; messageId: string };
}

/**
 * `local@domain` split at the last `@`, the domain in the one form domains are stored under
 * (normalizeDomainName: lower-case punycode without a trailing dot, so mail to `xn--bcher-kva.example`
 * finds a route written `*@bücher.example`); null when malformed or the domain is no mail domain.
 */
export function splitAddress(address: string): { local: string; domain: string } | null {
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return null;
  let domain: string;
  try {
    domain = normalizeDomainName(address.slice(at + 1));
  } catch {
    return null;
  }
  return { local: address.slice(0, at), domain };
}

function tagOf(local: string, base: string): string | null | undefined {
  if (local === base) return null;
  if (local.startsWith(`${base}+`)) return local.slice(base.length + 1);
  return undefined;
}

/** The first of `routes` (already in order, enabled, at the recipient's domain) that takes `local`. */
export function matchRoute(routes: InboundRouteRow[], local: string): RouteMatch | null {
  for (const route of routes) {
    if (!route.enabled) continue;
    const pattern = route.match_address.slice(0, route.match_address.lastIndexOf('@'));
    if (pattern === '*') {
      const plus = local.indexOf('+');
      return { route, mailboxHash: plus > 0 ? local.slice(plus + 1) : null };
    }
    if (pattern.endsWith('+*')) {
      const tag = tagOf(local, pattern.slice(0, -2));
      if (tag !== undefined) return { route, mailboxHash: tag };
      continue;
    }
    if (pattern === local) return { route, mailboxHash: null };
  }
  return null;
}

/** A route's address normalised for storage: the domain lower-cased, the local part as written. */
export function normaliseMatchAddress(address: string): string {
  const parts = splitAddress(address.trim());
  return parts ? `${parts.local}@${parts.domain}` : address.trim();
}
