// `svc api`: any operation of the daemon's own /openapi.json, so an endpoint without a hand-made command
// is never out of reach. The document is fetched from the daemon being talked to, so the list is always
// that daemon's (an older or newer daemon lists what it has).
import { readFile } from 'node:fs/promises';
import type { SvcClient } from '../client.ts';
import { CliFailure, EXIT } from '../errors.ts';
import { readStdin } from './session.ts';

interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: { type?: string };
}
interface OpenApiOperation {
  operationId: string;
  summary?: string;
  parameters?: OpenApiParameter[];
  security?: unknown[];
  requestBody?: { required?: boolean; content?: Record<string, unknown> };
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
}

export interface ApiOperation {
  operationId: string;
  method: string;
  path: string;
  summary: string;
  /** Path and query parameters, with `required` as the document says. */
  parameters: { name: string; in: 'path' | 'query'; required: boolean; array: boolean }[];
  /** False on public operations (no credentials sent). */
  authenticated: boolean;
  /** True when the operation takes X-Tenant-Id (sent from the profile or SVC_TENANT_ID). */
  tenantScoped: boolean;
  hasBody: boolean;
}

export async function fetchOperations(client: SvcClient): Promise<ApiOperation[]> {
  const document = await client.http.request<OpenApiDocument>('GET', '/openapi.json', { auth: false, tenant: false });
  return listOperations(document);
}

export function listOperations(document: OpenApiDocument): ApiOperation[] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => {
      const parameters = operation.parameters ?? [];
      return {
        operationId: operation.operationId,
        method: method.toUpperCase(),
        path,
        summary: operation.summary ?? '',
        parameters: parameters
          .filter((p): p is OpenApiParameter & { in: 'path' | 'query' } => p.in === 'path' || p.in === 'query')
          .map((p) => ({ name: p.name, in: p.in, required: p.required === true, array: p.schema?.type === 'array' })),
        authenticated: (operation.security ?? []).length > 0,
        tenantScoped: parameters.some((p) => p.in === 'header' && p.name.toLowerCase() === 'x-tenant-id'),
        hasBody: operation.requestBody !== undefined,
      };
    }),
  );
}

export function findOperation(operations: ApiOperation[], operationId: string): ApiOperation {
  const found = operations.find((operation) => operation.operationId === operationId);
  if (found) return found;
  const near = operations
    .filter((operation) => operation.operationId.toLowerCase().includes(operationId.toLowerCase()))
    .slice(0, 5)
    .map((operation) => operation.operationId);
  throw new CliFailure(
    `The daemon has no operation "${operationId}"${near.length ? ` (did you mean ${near.join(', ')}?)` : ''}: see \`svc api --list\`.`,
    EXIT.usage,
    'UNKNOWN_OPERATION',
  );
}

/** `--param k=v` pairs; a repeated key becomes several values (array query parameters). */
export function parsePairs(pairs: string[]): Map<string, string[]> {
  const values = new Map<string, string[]>();
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new CliFailure(`--param takes key=value, not "${pair}".`, EXIT.usage, 'BAD_FLAG');
    const key = pair.slice(0, at);
    values.set(key, [...(values.get(key) ?? []), pair.slice(at + 1)]);
  }
  return values;
}

/** `--body`: inline JSON, `@file.json`, or `-` for stdin. */
export async function readJsonBody(source: string): Promise<unknown> {
  const text =
    source === '-' ? await readStdin() : source.startsWith('@') ? await readFile(source.slice(1), 'utf8') : source;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliFailure(`The body is not JSON: ${(error as Error).message}`, EXIT.usage, 'BAD_FLAG');
  }
}

export async function callOperation(
  client: SvcClient,
  operation: ApiOperation,
  input: { params: Map<string, string[]>; body?: unknown },
): Promise<unknown> {
  const params = new Map(input.params);
  // The current tenant fills a {tenantId} left out, as the hand-made commands do.
  if (!params.has('tenantId') && client.http.tenantId) params.set('tenantId', [client.http.tenantId]);
  const known = new Set(operation.parameters.map((parameter) => parameter.name));
  const unknown = [...input.params.keys()].filter((key) => !known.has(key));
  if (unknown.length)
    throw new CliFailure(
      `${operation.operationId} takes no parameter ${unknown.join(', ')} (it takes: ${[...known].join(', ') || 'none'}).`,
      EXIT.usage,
      'BAD_FLAG',
    );
  let path = operation.path;
  const query: Record<string, string | string[]> = {};
  for (const parameter of operation.parameters) {
    const values = params.get(parameter.name);
    if (!values) {
      if (parameter.required)
        throw new CliFailure(`${operation.operationId} needs --param ${parameter.name}=…`, EXIT.usage, 'MISSING_FLAG');
      continue;
    }
    if (parameter.in === 'path') path = path.replace(`{${parameter.name}}`, encodeURIComponent(values[0]));
    else query[parameter.name] = parameter.array ? values : values[values.length - 1];
  }
  if (input.body !== undefined && !operation.hasBody)
    throw new CliFailure(`${operation.operationId} takes no body.`, EXIT.usage, 'BAD_FLAG');
  return client.http.request<unknown>(operation.method, path, {
    query,
    auth: operation.authenticated,
    tenant: operation.tenantScoped,
    ...(input.body === undefined ? {} : { json: input.body }),
  });
}
