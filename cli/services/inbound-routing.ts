// Inbound routing (docs/inbound.md): the calls behind `svc inbound …`, and the feed `svc inbound tail` follows.
import type { SvcClient } from '../client.ts';
import type {
  CreateInboundDomainBody,
  CreateInboundRouteBody,
  InboundDomain,
  InboundDomainsPage,
  InboundMessageDetail,
  InboundMessagesPage,
  InboundMessagesQuery,
  InboundMessageSummary,
  InboundReplayAnswer,
  InboundRoute,
  InboundRoutesPage,
  InboundStats,
  InboundTokenAddress,
  UpdateInboundAddressBody,
  UpdateInboundRouteBody,
} from '../../shared/schemas/inbound.ts';

const id = (value: string) => encodeURIComponent(value);

export const listRoutes = (client: SvcClient) =>
  client.http.request<InboundRoutesPage>('GET', '/inbound/routes', { query: { limit: 500 } });
export const createRoute = (client: SvcClient, body: CreateInboundRouteBody) =>
  client.http.request<InboundRoute>('POST', '/inbound/routes', { json: body });
export const getRoute = (client: SvcClient, routeId: string) =>
  client.http.request<InboundRoute>('GET', `/inbound/routes/${id(routeId)}`);
export const updateRoute = (client: SvcClient, routeId: string, body: UpdateInboundRouteBody) =>
  client.http.request<InboundRoute>('PATCH', `/inbound/routes/${id(routeId)}`, { json: body });
export const removeRoute = (client: SvcClient, routeId: string) =>
  client.http.request<unknown>('DELETE', `/inbound/routes/${id(routeId)}`);

export const listMessages = (client: SvcClient, query: InboundMessagesQuery) =>
  client.http.request<InboundMessagesPage>('GET', '/inbound/messages', {
    query: { ...query },
  });
export const getMessage = (client: SvcClient, messageId: string) =>
  client.http.request<InboundMessageDetail>('GET', `/inbound/messages/${id(messageId)}`);
/** The message as received (message/rfc822), byte for byte: an 8-bit body need not be UTF-8. */
export async function getRawMessage(client: SvcClient, messageId: string): Promise<Buffer> {
  const response = await client.http.send('GET', `/inbound/messages/${id(messageId)}/raw`);
  return Buffer.from(await response.arrayBuffer());
}
export const replayMessage = (client: SvcClient, messageId: string) =>
  client.http.request<InboundReplayAnswer>('POST', `/inbound/messages/${id(messageId)}/replay`);

export const getTokenAddress = (client: SvcClient) =>
  client.http.request<InboundTokenAddress>('GET', '/inbound/address');
export const rotateTokenAddress = (client: SvcClient) =>
  client.http.request<InboundTokenAddress>('POST', '/inbound/address/rotate');
export const updateTokenAddress = (client: SvcClient, body: UpdateInboundAddressBody) =>
  client.http.request<InboundTokenAddress>('PATCH', '/inbound/address', { json: body });

export const listDomains = (client: SvcClient) =>
  client.http.request<InboundDomainsPage>('GET', '/inbound/domains', { query: { limit: 100 } });
export const addDomain = (client: SvcClient, body: CreateInboundDomainBody) =>
  client.http.request<InboundDomain>('POST', '/inbound/domains', { json: body });
export const getDomain = (client: SvcClient, domainId: string) =>
  client.http.request<InboundDomain>('GET', `/inbound/domains/${id(domainId)}`);
export const verifyDomain = (client: SvcClient, domainId: string) =>
  client.http.request<InboundDomain>('POST', `/inbound/domains/${id(domainId)}/verify`);
export const removeDomain = (client: SvcClient, domainId: string) =>
  client.http.request<unknown>('DELETE', `/inbound/domains/${id(domainId)}`);

/** Received messages by status over the last 24 h and 7 days, per route, and the failing endpoints. */
export const getStats = (client: SvcClient) => client.http.request<InboundStats>('GET', '/inbound/stats');

/**
 * Messages as they arrive or change status, oldest first: `backlog` recent ones, then a poll of the newest
 * page every `pollMs` (the API has no stream for inbound mail). A message is yielded again when its status
 * or updatedAt changes (a webhook that failed and then succeeded on retry, a replay).
 */
export async function* followMessages(
  client: SvcClient,
  options: { signal: AbortSignal; backlog: number; pollMs: number; filters?: InboundMessagesQuery },
): AsyncGenerator<InboundMessageSummary> {
  const seen = new Map<string, string>();
  let first = true;
  while (!options.signal.aborted) {
    const limit = first ? Math.max(1, Math.min(100, options.backlog)) : 100;
    const page = await listMessages(client, { ...options.filters, limit });
    const fresh = page.data.filter((message) => seen.get(message.id) !== `${message.status}@${message.updatedAt}`);
    for (const message of fresh.reverse()) {
      seen.set(message.id, `${message.status}@${message.updatedAt}`);
      if (!first || options.backlog > 0) yield message;
    }
    // Bounded memory: forget what dropped out of the newest page long ago.
    if (seen.size > 2000) for (const key of [...seen.keys()].slice(0, seen.size - 1000)) seen.delete(key);
    first = false;
    await sleep(options.pollMs, options.signal);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
