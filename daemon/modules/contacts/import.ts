// POST /contacts/import: a CSV body (text/csv) read as a stream, so a file of any size goes through
// in one request without sitting in memory. Records are parsed as they arrive (csv-parse), mapped
// to contact fields by the header row, checked one by one like bulk rows, and written set-wise
// (bulk.ts) IMPORT_CHUNK_ROWS at a time; up to CHUNKS_IN_FLIGHT chunks are written at once while the
// next is parsed, and reading waits for the writes (the socket's backpressure reaches the client).
// Chunks that touch the same contact are written in the file's order (import-writer.ts), so a file
// that names one contact twice ends as its last row says.
//
// A bad row (no address, a malformed locale, optIn "maybe" …) is a row error with its line number;
// the import goes on. The answer counts every row and lists the first MAX_LISTED_ERRORS errors.
import type { Readable } from 'node:stream';
import { Parser, type Options as CsvOptions } from 'csv-parse';
import { ValidationError } from '../../errors.ts';
import type { TenantContext } from '../../context.ts';
import type { ContactDeps } from './service.ts';
import type { BulkRowResult, ContactImportResult, UpsertContactBody } from '../../../shared/schemas/contacts.ts';
import { findMatches, upsertCheckedContacts } from './bulk.ts';
import { ChunkWriter } from './import-writer.ts';
import { checkUpsertRow } from './row-validation.ts';

export const IMPORT_CHUNK_ROWS = 1000;
export const MAX_LISTED_ERRORS = 1000;
const SIMPLE_FIELDS = ['email', 'externalId', 'firstName', 'lastName', 'locale', 'optIn', 'tags', 'projectId'] as const;
type SimpleField = (typeof SIMPLE_FIELDS)[number];
const TRUE_WORDS = new Set(['true', 'yes', 'y', '1']);
const FALSE_WORDS = new Set(['false', 'no', 'n', '0']);

/** Which column feeds which field: `field=Column` pairs; attributes as `attributes.name=Column`. */
export interface ColumnMap {
  fields: Partial<Record<SimpleField, number>>;
  attributes: [name: string, column: number][];
}

/**
 * The header row and the `map` pairs → column indexes. Without a pair for a field, a column named
 * like the field (case-insensitive) feeds it; other columns are ignored unless mapped.
 */
export function columnMap(header: string[], pairs: string[]): ColumnMap {
  const position = new Map(header.map((name, index) => [name.trim().toLowerCase(), index]));
  const map: ColumnMap = { fields: {}, attributes: [] };
  const problems: { field: string; message: string }[] = [];
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    const field = at > 0 ? pair.slice(0, at).trim() : '';
    const column = at > 0 ? pair.slice(at + 1).trim() : '';
    const index = position.get(column.toLowerCase());
    if (!field || !column) problems.push({ field: 'querystring.map', message: `"${pair}" is not field=Column` });
    else if (index === undefined)
      problems.push({
        field: 'querystring.map',
        message: `the CSV has no column "${column}" (it has ${header.map((h) => `"${h}"`).join(', ')})`,
      });
    else if (field.startsWith('attributes.') && field.length > 'attributes.'.length)
      map.attributes.push([field.slice('attributes.'.length), index]);
    else if ((SIMPLE_FIELDS as readonly string[]).includes(field)) map.fields[field as SimpleField] = index;
    else
      problems.push({
        field: 'querystring.map',
        message: `"${field}" is not a contact field (${SIMPLE_FIELDS.join(', ')}, attributes.<name>)`,
      });
  }
  for (const field of SIMPLE_FIELDS) {
    const index = position.get(field.toLowerCase());
    if (map.fields[field] === undefined && index !== undefined) map.fields[field] = index;
  }
  if (map.fields.email === undefined)
    problems.push({
      field: 'querystring.map',
      message: 'no column gives the email: add a column "email" or map one with email=Column',
    });
  if (problems.length)
    throw new ValidationError(
      `The CSV columns cannot be mapped: ${problems.map((p) => p.message).join('; ')}.`,
      problems,
    );
  return map;
}

/** One record → an upsert body (empty cells are left out: they keep the contact's value), or a sentence. */
export function recordToContact(
  record: string[],
  map: ColumnMap,
): { ok: true; value: UpsertContactBody } | { ok: false; error: string } {
  const cell = (field: SimpleField): string | undefined => {
    const index = map.fields[field];
    const value = index === undefined ? undefined : record[index]?.trim();
    return value === '' ? undefined : value;
  };
  const raw: Record<string, unknown> = {};
  for (const field of ['email', 'externalId', 'firstName', 'lastName', 'locale', 'projectId'] as const) {
    const value = cell(field);
    if (value !== undefined) raw[field] = value;
  }
  const optIn = cell('optIn')?.toLowerCase();
  if (optIn !== undefined) {
    if (TRUE_WORDS.has(optIn)) raw.optIn = true;
    else if (FALSE_WORDS.has(optIn)) raw.optIn = false;
    else return { ok: false, error: `optIn "${optIn}" is not one of true/false, yes/no, 1/0.` };
  }
  const tags = cell('tags');
  if (tags !== undefined)
    raw.tags = [
      ...new Set(
        tags
          .split(/[;|]/)
          .map((t) => t.trim())
          .filter(Boolean),
      ),
    ];
  if (map.attributes.length > 0) {
    raw.attributes = Object.fromEntries(map.attributes.map(([name, index]) => [name, record[index] ?? '']));
  }
  if (raw.email === undefined) return { ok: false, error: 'Invalid contact: email is empty.' };
  return checkUpsertRow(raw);
}

interface ParsedRecord {
  record: string[];
  info: { lines: number };
}

/**
 * csv-parse's stream parser, each record given with the line it ends on, as its `info` option gives it.
 * That option copies the parser's whole state for every record: 1.3 s of CPU for 100,000 rows of
 * bench:lists' file against 0.6–0.8 s without, the largest cost of an import on this thread. The
 * count read at push time is the one `info` copies (the record is pushed as it completes).
 */
class LinedParser extends Parser {
  constructor(options: CsvOptions) {
    super(options);
  }

  override push(record: unknown, encoding?: BufferEncoding): boolean {
    return super.push(record === null ? null : { record, info: { lines: this.info.lines } }, encoding);
  }
}

/**
 * Feeds `take` every record of the CSV stream, in order. The parser always flows (a paused parser
 * that fails drops the records it buffered), and the SOURCE is paused instead while records wait:
 * at most about two chunks are held in memory however large the file. Resolves with the parse
 * error that ended reading early, or null.
 */
async function readRecords(body: Readable, take: (parsed: ParsedRecord) => Promise<void>): Promise<Error | null> {
  const parser = new LinedParser({ bom: true, relax_column_count: true, skip_empty_lines: true });
  const waiting: ParsedRecord[] = [];
  let holding = false;
  let ended = false;
  let failure: Error | null = null;
  let wake: (() => void) | null = null;
  const notify = () => wake?.();
  body.on('data', (data: Buffer) => {
    if (!parser.write(data)) body.pause();
  });
  body.on('end', () => parser.end());
  body.on('error', (error) => parser.destroy(error));
  parser.on('drain', () => {
    if (!holding) body.resume();
  });
  parser.on('data', (parsed: ParsedRecord) => {
    waiting.push(parsed);
    if (waiting.length >= 2 * IMPORT_CHUNK_ROWS) {
      holding = true;
      body.pause();
    }
    notify();
  });
  parser.on('end', () => {
    ended = true;
    notify();
  });
  parser.on('error', (error) => {
    failure = error;
    ended = true;
    notify();
  });
  try {
    for (;;) {
      while (waiting.length > 0) await take(waiting.shift()!);
      if (ended) return failure;
      if (holding) {
        holding = false;
        body.resume();
      }
      await new Promise<void>((resolve) => (wake = resolve));
      wake = null;
    }
  } catch (error) {
    // A refusal of the whole import (the header): stop reading, let the error answer.
    body.unpipe();
    body.pause();
    parser.destroy();
    throw error;
  }
}

export async function importContactsCsv(
  deps: ContactDeps,
  ctx: TenantContext,
  input: { csv: Readable; map: string[] },
): Promise<ContactImportResult> {
  const { sql } = deps.db;
  const { csv: body, map: pairs } = input;
  const summary: ContactImportResult = {
    rows: 0,
    created: 0,
    updated: 0,
    failed: 0,
    errors: [],
    errorsOmitted: 0,
    aborted: null,
  };
  // Chunks finish out of order (import-writer.ts): errors are kept by line, the first MAX_LISTED_ERRORS.
  const errors: ContactImportResult['errors'] = [];
  const rowError = (line: number, error: string) => {
    summary.failed += 1;
    errors.push({ line, error });
    if (errors.length >= 2 * MAX_LISTED_ERRORS) keepFirstErrors(errors, summary);
  };
  type Row = { line: number; body: UpsertContactBody };
  const writer = new ChunkWriter<Row>({
    lookup: (rows) => findMatches(sql, ctx.tenantId, rows),
    write: async (rows, matches) => {
      const results: BulkRowResult[] = new Array(rows.length);
      await upsertCheckedContacts(
        sql,
        ctx,
        rows.map((row, index) => ({ index, body: row.body })),
        results,
        matches,
      );
      results.forEach((result, index) => {
        if (result.status === 'created') summary.created += 1;
        else if (result.status === 'updated') summary.updated += 1;
        else rowError(rows[index].line, result.error ?? 'not written');
      });
    },
  });
  let chunk: Row[] = [];
  const flush = async () => {
    const rows = chunk;
    chunk = [];
    await writer.submit(rows);
  };

  let map: ColumnMap | null = null;
  // csv-parse counts a CRLF inside a quoted field as two lines; its count is corrected by those seen so far.
  let overcounted = 0;
  const take = async ({ record, info }: ParsedRecord) => {
    for (const field of record) if (field.includes('\r\n')) overcounted += field.split('\r\n').length - 1;
    const line = info.lines - overcounted;
    if (!map) {
      map = columnMap(record, pairs);
      return;
    }
    summary.rows += 1;
    const contact = recordToContact(record, map);
    if (!contact.ok) rowError(line, contact.error);
    else chunk.push({ line, body: contact.value });
    if (chunk.length >= IMPORT_CHUNK_ROWS) await flush();
  };
  const failure = await readRecords(body, take).catch(async (error: unknown) => {
    // The chunks already started end before the error answers (their failures are the same one's echo).
    await writer.finish().catch(() => {});
    throw error;
  });
  if (failure) {
    if (!(failure as { code?: string }).code?.startsWith('CSV_')) {
      // The upload broke off: the chunks already started end before the error answers.
      await writer.finish().catch(() => {});
      throw failure;
    }
    // csv-parse refuses the rest of the file (an unclosed quote …): what was read before is kept.
    summary.aborted = `The CSV could not be read further: ${failure.message}. The rows before it were imported.`;
  }
  if (!map && !summary.aborted)
    throw new ValidationError('The CSV is empty: it needs a header row and one row per contact.', [
      { field: 'body', message: 'is empty' },
    ]);
  if (chunk.length > 0) await flush();
  await writer.finish();
  keepFirstErrors(errors, summary);
  return summary;
}

/** The MAX_LISTED_ERRORS errors of the lowest lines go in the answer; the others are counted. */
function keepFirstErrors(errors: ContactImportResult['errors'], summary: ContactImportResult): void {
  errors.sort((a, b) => a.line - b.line);
  if (errors.length > MAX_LISTED_ERRORS) summary.errorsOmitted += errors.splice(MAX_LISTED_ERRORS).length;
  summary.errors = errors;
}
