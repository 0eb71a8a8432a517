// One HTTP POST to a checked delivery target. Plain node:http/https so that the connection goes to
// the address url-guard checked (a fixed `lookup`) while the Host header, TLS SNI and certificate
// check keep using the host name. Redirects are never followed: a 3xx is simply a failed attempt.
// With an `agent` (one keep-alive agent per endpoint and checked address, see endpoint-lane.ts) the
// connection is reused; the agent's pooled sockets were all opened to that same checked address.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { DeliveryTarget } from './url-guard.ts';

export const WEBHOOK_TIMEOUT_MS = 10_000;
export const RESPONSE_BODY_LIMIT_BYTES = 2048;

export interface PostResult {
  statusCode: number;
  /** The first RESPONSE_BODY_LIMIT_BYTES of the answer. */
  body: string;
  /** The Retry-After header, when the receiver sent one. */
  retryAfter: string | null;
}

export class WebhookTransportError extends Error {
  constructor(
    message: string,
    readonly timedOut = false,
  ) {
    super(message);
    this.name = 'WebhookTransportError';
  }
}

export function pinnedLookup(target: DeliveryTarget): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as unknown as LookupFunction;
}

/** A keep-alive agent for one endpoint at one checked address. */
export function createKeepAliveAgent(target: DeliveryTarget, maxSockets: number): http.Agent {
  const options = {
    keepAlive: true,
    maxSockets,
    maxFreeSockets: maxSockets,
    scheduling: 'lifo' as const,
    lookup: pinnedLookup(target),
  };
  return target.url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
}

export async function postToTarget(
  target: DeliveryTarget,
  headers: Record<string, string>,
  body: string,
  options: { timeoutMs?: number; agent?: http.Agent } = {},
): Promise<PostResult> {
  try {
    return await postOnce(target, headers, body, options);
  } catch (error) {
    // A pooled connection the receiver closed while idle breaks at once: that is not the receiver's
    // answer, so the request goes again on a new connection (Node's documented keep-alive race).
    if (error instanceof ReusedSocketError) return postOnce(target, headers, body, options);
    throw error;
  }
}

class ReusedSocketError extends WebhookTransportError {}

function postOnce(
  target: DeliveryTarget,
  headers: Record<string, string>,
  body: string,
  { timeoutMs = WEBHOOK_TIMEOUT_MS, agent }: { timeoutMs?: number; agent?: http.Agent },
): Promise<PostResult> {
  const client = target.url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    let settled = false;
    let answered = false;
    const finish = (error: Error | null, result?: PostResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(result!);
    };
    const request = client.request(
      {
        method: 'POST',
        protocol: target.url.protocol,
        hostname: target.hostname,
        port: target.url.port || undefined,
        path: `${target.url.pathname}${target.url.search}`,
        auth: target.url.username
          ? `${decodeURIComponent(target.url.username)}:${decodeURIComponent(target.url.password)}`
          : undefined,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup: pinnedLookup(target),
        agent: agent ?? false,
      },
      (response) => {
        answered = true;
        const chunks: Buffer[] = [];
        let size = 0;
        const retryAfter = response.headers['retry-after'] ?? null;
        const done = () =>
          finish(null, {
            statusCode: response.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8').slice(0, RESPONSE_BODY_LIMIT_BYTES),
            retryAfter,
          });
        response.on('data', (chunk: Buffer) => {
          if (size < RESPONSE_BODY_LIMIT_BYTES) chunks.push(chunk.subarray(0, RESPONSE_BODY_LIMIT_BYTES - size));
          size += chunk.length;
          // A receiver streaming a large answer does not keep the worker: we have what we keep, and
          // the connection is dropped rather than drained.
          if (size >= RESPONSE_BODY_LIMIT_BYTES) {
            done();
            response.destroy();
          }
        });
        // Read to the end, so that a keep-alive connection goes back to its agent's pool.
        response.on('end', done);
        response.on('error', (error) => finish(new WebhookTransportError(`the response broke off: ${error.message}`)));
      },
    );
    const timer = setTimeout(() => {
      finish(new WebhookTransportError(`no answer within ${Math.round(timeoutMs / 1000)} s`, true));
      request.destroy();
    }, timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) => {
      const stale = request.reusedSocket && !answered && (error.code === 'ECONNRESET' || error.code === 'EPIPE');
      finish(stale ? new ReusedSocketError(error.message) : new WebhookTransportError(error.message));
    });
    request.end(body);
  });
}
