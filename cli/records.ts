// Human output of one API record or a list of them, for the commands that show what the daemon answered
// as it is (members, contacts, projects, settings…). --json never passes through here.
import { keyValue, shortDate, table } from './format.ts';

type Value = unknown;

/** One line per field; objects and arrays as compact JSON, timestamps shortened. */
export function describeRecord(record: object, fields?: string[]): string {
  const entries = Object.entries(record).filter(([key]) => !fields || fields.includes(key));
  return keyValue(entries.map(([key, value]) => [key, cell(key, value)]));
}

/** A table of `fields` (in that order) over `rows`. */
export function describeRows<T extends object>(rows: T[], fields: (keyof T & string)[], empty?: string): string {
  return table(
    rows,
    fields.map((field) => ({ header: field.toUpperCase(), value: (row: T) => cell(field, row[field]) })),
    empty,
  );
}

function cell(key: string, value: Value): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return key.endsWith('At') ? shortDate(value) : value;
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value.join(', ') || '—';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
