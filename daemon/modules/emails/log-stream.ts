// The live email log of a tenant as server-sent events, for `svc logs tail`:
//
//   logStreamStart(deps, ctx, { resumeFrom, backlog }) → Promise<LogStreamStart>  ({ backlog, cursor })
//   runLogStream(deps, ctx, { start, sink, credentialStillValid, log }) → LogStream  ({ stop })
//
// It knows no HTTP: the route (./stream-routes.ts) reads the start before it opens the response
// (so a database error is still an error answer), then hands a sink that writes to the response. The database is polled about once a second per open stream (cheap: one indexed range
// query, ./sql/log-stream.ts); each change of a log row is one `event: email` frame whose id
// resumes the stream (Last-Event-ID, parsed by parseLastEventId).
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../../db/index.ts';
import type { TenantContext } from '../../context.ts';
import { logSummaryOfRow } from './sql/log-columns.ts';
import { databaseNow, latestLogs, logChangesSince, type LogChangeRow, type StreamCursor } from './sql/log-stream.ts';

export const LOG_STREAM_POLL_MS = 1000;
export const LOG_STREAM_HEARTBEAT_MS = 15_000;
/** How often an open stream checks that its API key or sign-in still holds. */
export const LOG_STREAM_REVALIDATE_MS = 5_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A timestamptz as PostgreSQL prints it, e.g. `2026-05-01 09:00:00.123456+00`. */
const PG_TIMESTAMP = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?([+-]\d{2}(:?\d{2})?|Z)?$/;

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

/** Where the event stream goes: the route writes it to the open response. */
export interface EventSink {
  write(text: string): void;
  end(): void;
}

export interface LogStreamStartInput {
  /** The cursor of a Last-Event-ID header; when set, no backlog is sent. */
  resumeFrom: StreamCursor | null;
  /** How many recent logs to send first. */
  backlog: number;
}

/** What a stream sends first and where its polling starts. */
export interface LogStreamStart {
  backlog: LogChangeRow[];
  cursor: StreamCursor;
}

export interface RunLogStreamInput {
  start: LogStreamStart;
  sink: EventSink;
  /** Whether the API key or sign-in behind the stream still holds. */
  credentialStillValid: () => Promise<boolean>;
  log: FastifyBaseLogger;
}

type StreamDeps = { db: Database };
type StreamContext = Pick<TenantContext, 'tenantId'>;

export interface LogStream {
  /** Stops polling and heartbeats (the connection closed). */
  stop(): void;
}

/** The same fields as an entry of GET /emails/logs, plus updatedAt. */
function toEvent(row: LogChangeRow) {
  return { ...logSummaryOfRow(row), updatedAt: new Date(row.updated_at).toISOString() };
}

function emailFrame(row: LogChangeRow): string {
  return `id: ${row.cursor}|${row.id}\nevent: email\ndata: ${JSON.stringify(toEvent(row))}\n\n`;
}

const REVOKED_FRAME = `event: end\ndata: ${JSON.stringify({ code: 'CREDENTIAL_REVOKED', message: 'The API key or sign-in behind this stream was revoked or has expired.' })}\n\n`;

/** (updated_at, id) order; PostgreSQL prints timestamps of one session in one sortable form. */
function atOrBefore(row: LogChangeRow, cursor: StreamCursor): boolean {
  return row.cursor < cursor.at || (row.cursor === cursor.at && row.id <= cursor.id);
}

/** The cursor of a Last-Event-ID header (`<updated_at>|<id>`), or null when absent or malformed. */
export function parseLastEventId(header: string | string[] | undefined): StreamCursor | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return null;
  const separator = value.lastIndexOf('|');
  const at = value.slice(0, separator);
  const id = value.slice(separator + 1);
  if (separator < 1 || !UUID.test(id) || !PG_TIMESTAMP.test(at)) return null;
  return { at, id };
}

/** The backlog to send and the cursor to poll from: after the newest backlog row, or from now. */
export async function logStreamStart(
  deps: StreamDeps,
  ctx: StreamContext,
  input: LogStreamStartInput,
): Promise<LogStreamStart> {
  const sequelize = deps.db.sequelize;
  const backlog = input.resumeFrom ? [] : await latestLogs(sequelize, ctx.tenantId, input.backlog);
  const newest = backlog.at(-1);
  const cursor =
    input.resumeFrom ??
    (newest ? { at: newest.cursor, id: newest.id } : { at: await databaseNow(sequelize), id: ZERO_UUID });
  return { backlog, cursor };
}

/** Sends the backlog, then polls for changes and sends each once, with heartbeats, until stopped. */
export function runLogStream(deps: StreamDeps, ctx: StreamContext, input: RunLogStreamInput): LogStream {
  const { sink } = input;
  let cursor = input.start.cursor;
  // Rows at or before where the stream started were the backlog or deliberately left out.
  const start: StreamCursor = cursor;
  // What this stream sent, by id → the updated_at it had, so the overlap re-reads send nothing twice.
  const sent = new Map<string, string>();
  const write = (rows: LogChangeRow[], polled: boolean) => {
    for (const row of rows) {
      if (sent.get(row.id) === row.cursor || (polled && atOrBefore(row, start))) continue;
      sent.set(row.id, row.cursor);
      sink.write(emailFrame(row));
      if (!atOrBefore(row, cursor)) cursor = { at: row.cursor, id: row.id };
    }
    if (sent.size > 10_000) sent.clear();
  };
  sink.write(`retry: 3000\n\n`);
  write(input.start.backlog, false);

  let closed = false;
  let pollTimer: NodeJS.Timeout | undefined;
  const heartbeat = setInterval(() => sink.write(': heartbeat\n\n'), LOG_STREAM_HEARTBEAT_MS);
  const stop = () => {
    closed = true;
    clearTimeout(pollTimer);
    clearInterval(heartbeat);
  };

  let validatedAt = Date.now();
  const poll = async () => {
    if (Date.now() - validatedAt >= LOG_STREAM_REVALIDATE_MS) {
      validatedAt = Date.now();
      if (!(await input.credentialStillValid().catch(() => true))) {
        // Revoked key, ended sign-in or expired token: say why, then end the stream (a client that
        // reconnects gets the 401 with the sentence).
        sink.write(REVOKED_FRAME);
        sink.end();
        stop();
        return;
      }
    }
    try {
      write(await logChangesSince(deps.db.sequelize, ctx.tenantId, cursor), true);
    } catch (error) {
      input.log.warn({ err: (error as Error).message }, 'email log stream poll failed');
    }
    if (!closed) pollTimer = setTimeout(() => void poll(), LOG_STREAM_POLL_MS);
  };
  pollTimer = setTimeout(() => void poll(), LOG_STREAM_POLL_MS);
  return { stop };
}
