// What /openapi.json says beyond each route's own schema, decided once from the route's access rule
// (access.ts), so no route can forget it: a unique operationId, the security requirement
// (explicitly none on public routes), the X-Tenant-Id header on tenant-scoped operations, and the
// response headers every answer carries (rate limit; quota on tenant-scoped ones; Retry-After on 429),
// and the error body as a `$ref` to one component (`components.schemas.ErrorBody`) instead of a copy.
import type { Access } from './access.ts';

const ERROR_BODY_ID = 'ErrorBody';

type Schema = Record<string, unknown> & {
  headers?: Record<string, unknown>;
  response?: Record<string, Record<string, unknown>>;
};

const TENANT_HEADER_DESCRIPTION =
  "The tenant to act in: required with an admin session (JWT); with an API key the key decides (if sent, it must name the key's tenant).";

/** Response headers; @fastify/swagger wraps each as `{ schema }` in the operation's responses. */
export const RESPONSE_HEADERS: Record<
  string,
  { description: string; schema: { type: 'integer' | 'string' | 'boolean' } }
> = {
  'X-RateLimit-Limit': { description: 'Requests allowed in the current window', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Unix time (seconds) at which the window resets', schema: { type: 'integer' } },
  'Retry-After': { description: 'Seconds to wait before retrying (429, 503)', schema: { type: 'integer' } },
  'X-Quota-Limit': { description: 'Emails the tenant may send this cycle', schema: { type: 'integer' } },
  'X-Quota-Used': { description: 'Emails counted this cycle', schema: { type: 'integer' } },
  'X-Quota-Percentage': { description: 'Used as a percentage of the limit', schema: { type: 'integer' } },
  'X-Quota-Warning': { description: 'true from 80 % to 100 % of the quota', schema: { type: 'boolean' } },
};

/** getEmailsLogsById from GET /emails/logs/:id. */
export function operationIdOf(method: string, url: string): string {
  const words = url
    .split('/')
    .filter(Boolean)
    .map((part) => (part.startsWith(':') ? `by-${part.slice(1)}` : part))
    .flatMap((part) => part.split(/[^A-Za-z0-9]+/))
    .filter(Boolean);
  return method.toLowerCase() + words.map((word) => word[0].toUpperCase() + word.slice(1)).join('');
}

function tenantScoped(rule: Access | undefined): boolean {
  return rule?.kind === 'keyOrSession' || (rule?.kind === 'session' && rule.tenant);
}

const headerSchema = (name: string) => ({
  ...RESPONSE_HEADERS[name].schema,
  description: RESPONSE_HEADERS[name].description,
});

/** Names the document's components after their schema's `$id` (ErrorBody), not `def-0`. */
export function componentName(
  json: Record<string, unknown>,
  _baseUri: unknown,
  _fragment: unknown,
  index: number,
): string {
  return typeof json.$id === 'string' ? json.$id : `def-${index}`;
}

export function describeOperation(schema: Schema, method: string, url: string, rule: Access | undefined): Schema {
  const secured = rule !== undefined && rule.kind !== 'public';
  const out: Schema = {
    ...schema,
    operationId: (schema.operationId as string | undefined) ?? operationIdOf(method, url),
    security: secured ? [{ bearer: [] }] : [],
  };
  if (tenantScoped(rule)) {
    const existing = (schema.headers as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
    out.headers = {
      type: 'object',
      properties: {
        ...existing,
        'x-tenant-id': { type: 'string', format: 'uuid', description: TENANT_HEADER_DESCRIPTION },
      },
    };
  }
  if (schema.response) {
    const response: Record<string, Record<string, unknown>> = {};
    for (const [status, body] of Object.entries(schema.response)) {
      const names = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];
      if (status === '429' || status === '503') names.push('Retry-After');
      if (tenantScoped(rule)) names.push('X-Quota-Limit', 'X-Quota-Used', 'X-Quota-Percentage', 'X-Quota-Warning');
      // The error body is one component every operation points to, so a generator makes one type of it;
      // always JSON, also on routes that otherwise produce something else (the log stream).
      const schemaOf =
        body.$id === ERROR_BODY_ID
          ? {
              description: body.description,
              content: { 'application/json': { schema: { $ref: `${ERROR_BODY_ID}#` } } },
            }
          : body;
      response[status] = { ...schemaOf, headers: Object.fromEntries(names.map((name) => [name, headerSchema(name)])) };
    }
    out.response = response;
  }
  return out;
}
