// Asserts CONTRACT.md's error body: { statusCode, error, code, message, details? }.
import * as assert from 'uvu/assert';
import { Value } from '@sinclair/typebox/value';
import { ErrorBody } from '../../shared/schemas/common.ts';
import { STATUS_TEXT } from '../../daemon/errors.ts';

interface InjectLike {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}

/** Why `res` is not a CONTRACT error body, or null when it is one. */
export function errorBodyProblem(res: InjectLike): string | null {
  if (!String(res.headers['content-type'] ?? '').startsWith('application/json'))
    return `content-type is ${String(res.headers['content-type'])}`;
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    return 'the body is not JSON';
  }
  if (!Value.Check(ErrorBody, body)) return `the body does not match ErrorBody: ${res.body.slice(0, 300)}`;
  const error = body as ErrorBody;
  if (error.statusCode !== res.statusCode)
    return `statusCode ${error.statusCode} differs from the HTTP status ${res.statusCode}`;
  if (STATUS_TEXT[res.statusCode] && error.error !== STATUS_TEXT[res.statusCode])
    return `error is "${error.error}", expected "${STATUS_TEXT[res.statusCode]}"`;
  if (!/^[A-Z][A-Z0-9_]+$/.test(error.code)) return `code "${error.code}" is not UPPER_SNAKE`;
  if (error.message.trim().length < 5) return 'the message is not a sentence';
  return null;
}

export function assertErrorBody(res: InjectLike, status: number, code?: string): ErrorBody {
  assert.is(res.statusCode, status, res.body.slice(0, 500));
  const problem = errorBodyProblem(res);
  assert.is(problem, null, problem ?? '');
  const body = JSON.parse(res.body) as ErrorBody;
  if (code) assert.is(body.code, code);
  return body;
}
