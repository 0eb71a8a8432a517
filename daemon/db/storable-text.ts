// What PostgreSQL cannot store as text, found in a parsed JSON body or any plain object of strings
// (a send built from an SMTP submission): U+0000, which text and jsonb cannot hold, and an unpaired
// UTF-16 surrogate (`\ud800` alone), which is no Unicode text and which jsonb refuses; and, for
// bodies, nesting deeper than MAX_JSON_DEPTH, which overflows the recursive steps after parsing. The
// walk is iterative. Callers turn a problem into their 400 (plugins/json-body.ts) or 554 (smtp/).
// What the service reads from strangers' mail it records rather than refuses: `withStorableText`
// gives that data with each such character replaced by U+FFFD (inbound-mail/reader-thread.ts).
import { MAX_JSON_DEPTH } from '../../shared/constants.ts';

/** Parsed JSON is plain objects and arrays; a raw body (a Buffer, a CSV stream) is left alone. */
function isJsonContainer(value: unknown): value is object {
  if (value === null || typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value);
  return Array.isArray(value) || prototype === Object.prototype || prototype === null;
}

/** String.prototype.isWellFormed and toWellFormed (ES2024; Node 20 has them, the project's TypeScript lib is ES2023). */
type Es2024String = { isWellFormed(): boolean; toWellFormed(): string };
const isWellFormed = (text: string) => (text as unknown as Es2024String).isWellFormed();
const toWellFormed = (text: string) => (text as unknown as Es2024String).toWellFormed();

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

/** `text` with U+0000 and unpaired surrogates replaced by U+FFFD (REPLACEMENT CHARACTER). */
export function storableText(text: string): string {
  const withoutNul = text.includes('\u0000') ? text.replaceAll('\u0000', '\ufffd') : text;
  return isWellFormed(withoutNul) ? withoutNul : toWellFormed(withoutNul);
}

/**
 * A copy of plain data (objects, arrays, Maps, as a parse answers them) with every string, key and value,
 * made storable; other values (numbers, dates, buffers) as they are.
 */
export function withStorableText<T>(value: T): T {
  const walk = (item: unknown): unknown => {
    if (typeof item === 'string') return storableText(item);
    if (Array.isArray(item)) return item.map(walk);
    if (item instanceof Map) return new Map([...item].map(([key, entry]) => [walk(key), walk(entry)]));
    if (isJsonContainer(item))
      return Object.fromEntries(Object.entries(item).map(([key, entry]) => [storableText(key), walk(entry)]));
    return item;
  };
  return walk(value) as T;
}
