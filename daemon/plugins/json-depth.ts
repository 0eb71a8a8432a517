// Bounds how deeply a JSON body may nest, once for every route. A body nested thousands of levels
// (in `attributes`, `metadata`, template `data` …) parses, but the recursive steps after it (schema
// validation, serialisation into jsonb, Liquid) overflow the stack: that was a 500. The walk here is
// iterative and runs before validation, so such a body is a 400 naming the field where it went too deep.
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { ValidationError } from '../errors.ts';
import { MAX_JSON_DEPTH } from '../../shared/constants.ts';

/** Parsed JSON is plain objects and arrays; a raw body (a Buffer, a CSV stream) is left alone. */
function isJsonContainer(value: unknown): value is object {
  if (value === null || typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value);
  return Array.isArray(value) || prototype === Object.prototype || prototype === null;
}

/** The path of the first value nested deeper than `maxDepth`, or null. */
export function tooDeepPath(body: unknown, maxDepth = MAX_JSON_DEPTH): string | null {
  if (!isJsonContainer(body)) return null;
  const stack: { value: object; depth: number; path: string }[] = [{ value: body, depth: 1, path: '' }];
  while (stack.length > 0) {
    const { value, depth, path } = stack.pop()!;
    if (depth > maxDepth) return path || '(body)';
    for (const [key, child] of Object.entries(value)) {
      if (isJsonContainer(child)) {
        stack.push({
          value: child,
          depth: depth + 1,
          path: Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key,
        });
      }
    }
  }
  return null;
}

async function jsonDepthPlugin(app: FastifyInstance): Promise<void> {
  app.addHook('preValidation', async (request) => {
    const path = tooDeepPath(request.body);
    if (path === null) return;
    throw new ValidationError(`The body nests deeper than ${MAX_JSON_DEPTH} levels.`, [
      { field: path.split('.').slice(0, 8).join('.'), message: `nested deeper than ${MAX_JSON_DEPTH} levels` },
    ]);
  });
}

export default fp(jsonDepthPlugin, { name: 'json-depth' });
