// One HTTP POST to a checked delivery target. Plain node:http/https so that the connection goes to
// the address url-guard checked (a fixed `lookup`) while the Host header, TLS SNI and certificate
// check keep using the host name. Redirects are never followed: a 3xx is simply a failed attempt.
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
}

export class WebhookTransportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookTransportError';
  }
}

function pinnedLookup(target: DeliveryTarget): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as unknown as LookupFunction;
}

export function postToTarget(
  target: DeliveryTarget,
  headers: Record<string, string>,
  body: string,
  timeoutMs = WEBHOOK_TIMEOUT_MS,
): Promise<PostResult> {
  const client = target.url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    let settled = false;
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
        auth: target.url.username ? `${decodeURIComponent(target.url.username)}:${decodeURIComponent(target.url.password)}` : undefined,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup: pinnedLookup(target),
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => {
          finish(null, { statusCode: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8').slice(0, RESPONSE_BODY_LIMIT_BYTES) });
          response.destroy();
        };
        response.on('data', (chunk: Buffer) => {
          if (size < RESPONSE_BODY_LIMIT_BYTES) chunks.push(chunk.subarray(0, RESPONSE_BODY_LIMIT_BYTES - size));
          size += chunk.length;
          // A receiver streaming a large answer does not keep the worker: we have what we keep.
          if (size >= RESPONSE_BODY_LIMIT_BYTES) done();
        });
        response.on('end', done);
        response.on('error', (error) => finish(new WebhookTransportError(`the response broke off: ${error.message}`)));
      },
    );
    const timer = setTimeout(() => {
      finish(new WebhookTransportError(`no answer within ${Math.round(timeoutMs / 1000)} s`));
      request.destroy();
    }, timeoutMs);
    request.on('error', (error) => finish(new WebhookTransportError(error.message)));
    request.end(body);
  });
}
