// Opaque keyset cursors ("meta.nextCursor"): the (timestamp, id) of the last row of a page, the
// timestamp as PostgreSQL prints it (microseconds kept), base64url-encoded JSON. Used by the lists
// that are walked with `cursor` (contacts, email logs).
import { ValidationError } from '../errors.ts';

export interface KeysetCursor {
  /** A timestamptz as PostgreSQL prints it, e.g. `2026-05-01 09:00:00.123456+00`. */
  at: string;
  id: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Also accepted in cursors: nothing but these digits and signs reaches a CAST. */
const POSTGRES_TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2}){0,2}$/;

export function encodeKeysetCursor(position: KeysetCursor): string {
  return Buffer.from(JSON.stringify([position.at, position.id])).toString('base64url');
}

export function decodeKeysetCursor(cursor: string): KeysetCursor {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(decoded) &&
      decoded.length === 2 &&
      typeof decoded[0] === 'string' &&
      POSTGRES_TIMESTAMP.test(decoded[0]) &&
      typeof decoded[1] === 'string' &&
      UUID.test(decoded[1])
    ) {
      return { at: decoded[0], id: decoded[1] };
    }
  } catch {
    // falls through to the validation error
  }
  throw new ValidationError('The cursor is not one this API handed out: pass meta.nextCursor unchanged.', [
    { field: 'querystring.cursor', message: 'is not a valid cursor' },
  ]);
}
