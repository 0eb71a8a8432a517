// Refuses, once for every route and before validation, JSON bodies that parse but cannot be stored:
// - nested deeper than MAX_JSON_DEPTH (in `attributes`, `metadata`, template `data` …): the recursive
//   steps after parsing (schema validation, serialisation into jsonb, Liquid) overflow the stack;
// - a string or key holding U+0000 (`\u0000`): PostgreSQL's text and jsonb cannot hold it;
// - a string or key holding an unpaired UTF-16 surrogate (`\ud800` alone): it is no Unicode text,
//   and jsonb refuses it.
// Each was a 500 at the database. The walk is iterative, so such a body is a 400 naming the field.
// A JSON body's depth (and member count) is already bounded while it arrives (request-body.ts); the
// depth check here still holds for bodies other parsers made.
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { ValidationError } from '../errors.ts';
import { MAX_JSON_DEPTH } from '../../shared/constants.ts';
import { unstorablePart } from '../db/storable-text.ts';

/** The 400 of a body nested deeper than MAX_JSON_DEPTH, `field` naming where (at most 8 segments). */
export function tooDeepError(field: string): ValidationError {
  return new ValidationError(`The body nests deeper than ${MAX_JSON_DEPTH} levels.`, [
    { field, message: `nested deeper than ${MAX_JSON_DEPTH} levels` },
  ]);
}

async function jsonBodyPlugin(app: FastifyInstance): Promise<void> {
  app.addHook('preValidation', async (request) => {
    const problem = unstorablePart(request.body);
    if (problem === null) return;
    // A path names at most 8 levels: a deep body's own path would be thousands of segments long.
    const field = problem.path.split('.').slice(0, 8).join('.');
    if (problem.tooDeep) throw tooDeepError(field);
    throw new ValidationError(`The body's ${field} ${problem.message}.`, [{ field, message: problem.message }]);
  });
}

export default fp(jsonBodyPlugin, { name: 'json-body' });
