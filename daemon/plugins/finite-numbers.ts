// Ajv coerces query and path strings such as "1e309" or "Infinity" to Infinity and then skips
// minimum/maximum (its range checks only look at finite numbers), so `?limit=Infinity` would reach
// the SQL. Numbers in the query and path must be finite; bodies are safe (JSON has no Infinity
// and ajv refuses a non-finite JSON number).
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ValidationError } from '../errors.ts';

interface ObjectSchema {
  properties?: Record<string, { type?: string | string[] }>;
  allOf?: ObjectSchema[];
  anyOf?: ObjectSchema[];
}

/** Names of numeric properties, looking through Type.Intersect / Type.Union too. */
function numericKeys(schema: ObjectSchema | undefined): string[] {
  if (!schema) return [];
  const own = Object.entries(schema.properties ?? {})
    .filter(([, property]) => [property.type].flat().some((type) => type === 'integer' || type === 'number'))
    .map(([key]) => key);
  const nested = [...(schema.allOf ?? []), ...(schema.anyOf ?? [])].flatMap(numericKeys);
  return [...own, ...nested];
}

function check(
  request: FastifyRequest,
  part: 'querystring' | 'params',
  values: unknown,
  known: WeakMap<object, string[]>,
): void {
  const schema = request.routeOptions.schema?.[part] as ObjectSchema | undefined;
  if (!schema) return;
  // A route's schema never changes: its numeric keys are worked out once, not on every request.
  let keys = known.get(schema);
  if (!keys) known.set(schema, (keys = numericKeys(schema)));
  if (keys.length === 0 || !values || typeof values !== 'object') return;
  for (const key of keys) {
    const raw = (values as Record<string, unknown>)[key];
    for (const value of [raw].flat()) {
      if (typeof value === 'string' && value.trim() !== '' && !Number.isFinite(Number(value))) {
        throw new ValidationError(`Invalid request: ${part}.${key} must be a finite number.`, [
          { field: `${part}.${key}`, message: 'must be a finite number' },
        ]);
      }
    }
  }
}

async function finiteNumbers(app: FastifyInstance): Promise<void> {
  const known = new WeakMap<object, string[]>();
  app.addHook('preValidation', async (request) => {
    check(request, 'querystring', request.query, known);
    check(request, 'params', request.params, known);
  });
}

export default fp(finiteNumbers, { name: 'finite-numbers' });
