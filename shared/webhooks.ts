// Webhook signing, shared by the daemon (which signs) and receivers (which verify). Only node:crypto
// is used, so a receiver can copy this file as it is.
//
// Two signatures travel on every delivery, over the same raw body:
// - `X-Service-Signature: t=<unix seconds>,v1=<hex>`: HMAC-SHA256 keyed with the whole secret string
//   (including `whsec_`) over `"<t>.<raw body>"`. This is Stripe's scheme, so
//   `stripe.webhooks.constructEvent(rawBody, header, secret)` accepts it.
// - Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`): HMAC-SHA256
//   over `"<webhook-id>.<timestamp>.<raw body>"`, keyed with the bytes after `whsec_` decoded from
//   base64. Our generated secrets use the base64url alphabet; Node's base64 decoder accepts both
//   alphabets. Libraries with a strict decoder (e.g. the `standardwebhooks` package) need the secret
//   rewritten first: `'whsec_' + Buffer.from(rest, 'base64url').toString('base64')`.
//   A secret without the `whsec_` prefix (chosen by the user) is used as UTF-8 bytes.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
export const SIGNATURE_HEADER = 'x-service-signature';
export const DEFAULT_SIGNATURE_TOLERANCE_SECONDS = 300;

/** `whsec_` + 32 random bytes in base64url. */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(32).toString('base64url');
}

function hmacHex(key: string | Buffer, message: string): string {
  return createHmac('sha256', key).update(message, 'utf8').digest('hex');
}

/** The value of X-Service-Signature for this body at this time. */
export function signWebhookPayload(options: { payload: string; secret: string; timestamp: number }): string {
  const t = Math.floor(options.timestamp);
  return `t=${t},v1=${hmacHex(options.secret, `${t}.${options.payload}`)}`;
}

/** The HMAC key of the Standard Webhooks signature. */
export function standardWebhooksKey(secret: string): Buffer {
  return secret.startsWith(WEBHOOK_SECRET_PREFIX)
    ? Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), 'base64')
    : Buffer.from(secret, 'utf8');
}

/** The value of `webhook-signature` (Standard Webhooks) for this message id, time and body. */
export function signStandardWebhook(options: {
  id: string;
  payload: string;
  secret: string;
  timestamp: number;
}): string {
  const t = Math.floor(options.timestamp);
  const digest = createHmac('sha256', standardWebhooksKey(options.secret))
    .update(`${options.id}.${t}.${options.payload}`, 'utf8')
    .digest('base64');
  return `v1,${digest}`;
}

export class WebhookSignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookSignatureError';
  }
}

function safeEqualHex(a: string, b: string): boolean {
  if (a.length !== b.length || !/^[0-9a-f]+$/.test(a)) return false;
  return timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}

/**
 * Checks an X-Service-Signature header against the raw body (the exact bytes received, before any
 * JSON parsing). Throws WebhookSignatureError when the header is malformed, no v1 signature matches,
 * or the timestamp is further than `toleranceSeconds` from now (replay protection; 0 turns it off).
 * Returns the parsed payload.
 */
export function verifyWebhookSignature(options: {
  payload: string | Buffer;
  header: string | string[] | undefined;
  secret: string;
  toleranceSeconds?: number;
  /** Current time in unix seconds (tests). */
  now?: number;
}): unknown {
  const header = Array.isArray(options.header) ? options.header[0] : options.header;
  if (!header) throw new WebhookSignatureError('The X-Service-Signature header is missing.');
  const payload = typeof options.payload === 'string' ? options.payload : options.payload.toString('utf8');
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const [key, value] = part.trim().split('=', 2);
    if (key === 't' && value && /^\d+$/.test(value)) timestamp = Number(value);
    if (key === 'v1' && value) signatures.push(value.toLowerCase());
  }
  if (timestamp === null || signatures.length === 0) {
    throw new WebhookSignatureError('The X-Service-Signature header must look like t=<unix seconds>,v1=<hex>.');
  }
  const expected = hmacHex(options.secret, `${timestamp}.${payload}`);
  if (!signatures.some((candidate) => safeEqualHex(candidate, expected))) {
    throw new WebhookSignatureError(
      'No signature matches the payload: check the secret and that the body is the raw bytes received.',
    );
  }
  const tolerance = options.toleranceSeconds ?? DEFAULT_SIGNATURE_TOLERANCE_SECONDS;
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (tolerance > 0 && Math.abs(now - timestamp) > tolerance) {
    throw new WebhookSignatureError(
      `The signature timestamp is more than ${tolerance} seconds away from now (a replayed request?).`,
    );
  }
  return JSON.parse(payload);
}
