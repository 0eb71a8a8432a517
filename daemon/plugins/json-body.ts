// Refuses, once for every route and before validation, JSON bodies that parse but cannot be stored:
// - nested deeper than MAX_JSON_DEPTH (in `attributes`, `metadata`, template `data` …): the recursive
//   steps after parsing (schema validation, serialisation into jsonb, Liquid) overflow the stack;
// - a string or key holding U+0000 (`\u0000`): PostgreSQL's text and jsonb cannot hold it;
// - a string or key holding an unpaired UTF-16 surrogate (`\ud800` alone): it is no Unicode text,
//   and jsonb refuses it.
// Each was a 500 at the database. The walk is iterative, so such a body is a 400 naming the field.
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

/** String.prototype.isWellFormed (ES2024; Node 20 has it, the project's TypeScript lib is ES2023). */
const isWellFormed = (text: string) => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Why a string cannot be stored as text, or null. */
function unstorableText(text: string): string | null {
  if (text.includes('\u0000')) return 'contains U+0000, which cannot be stored';
  if (!isWellFormed(text)) return 'contains an unpaired UTF-16 surrogate (not Unicode text)';
  return null;
}

export interface BodyProblem {
  /** Where, as `field.sub[2].key` ('(body)' for the body itself). */
  path: string;
  message: string;
  tooDeep: boolean;
}

/** The first part of a parsed JSON body that cannot be stored, or null. */
export function unstorablePart(body: unknown, maxDepth = MAX_JSON_DEPTH): BodyProblem | null {
  if (typeof body === 'string') {
    const message = unstorableText(body);
    return message === null ? null : { path: '(body)', message, tooDeep: false };
  }
  if (!isJsonContainer(body)) return null;
  const stack: { value: object; depth: number; path: string }[] = [{ value: body, depth: 1, path: '' }];
  while (stack.length > 0) {
    const { value, depth, path } = stack.pop()!;
    if (depth > maxDepth)
      return { path: path || '(body)', message: `nested deeper than ${maxDepth} levels`, tooDeep: true };
    const isArray = Array.isArray(value);
    for (const [key, child] of Object.entries(value)) {
      const childPath = isArray ? `${path}[${key}]` : path ? `${path}.${key}` : key;
      const problem =
        (isArray ? null : unstorableText(key)) ?? (typeof child === 'string' ? unstorableText(child) : null);
      if (problem !== null) return { path: childPath, message: problem, tooDeep: false };
      if (isJsonContainer(child)) stack.push({ value: child, depth: depth + 1, path: childPath });
    }
  }
  return null;
}

async function jsonBodyPlugin(app: FastifyInstance): Promise<void> {
  app.addHook('preValidation', async (request) => {
    const problem = unstorablePart(request.body);
    if (problem === null) return;
    // A path names at most 8 levels: a deep body's own path would be thousands of segments long.
    const field = problem.path.split('.').slice(0, 8).join('.');
    const summary = problem.tooDeep
      ? `The body nests deeper than ${MAX_JSON_DEPTH} levels.`
      : `The body's ${field} ${problem.message}.`;
    throw new ValidationError(summary, [{ field, message: problem.message }]);
  });
}

export default fp(jsonBodyPlugin, { name: 'json-body' });
