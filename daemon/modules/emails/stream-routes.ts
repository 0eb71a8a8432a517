// GET /emails/logs/stream: the tenant's email log as server-sent events, for `svc logs tail`.
// The database is polled about once a second per open stream (cheap: one indexed range query);
// each change of a log row is one `event: email` frame whose id resumes the stream (Last-Event-ID).
import { Type } from '@sinclair/typebox';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { ServerResponse } from 'node:http';
import type { App, ModuleDeps } from '../../app-types.ts';
import { access } from '../../plugins/access.ts';
import { credentialStillValid, tenantOf } from '../../plugins/auth.ts';
import { ErrorBody } from '../../../shared/schemas/common.ts';
import { logSummaryOfRow, type LogRowFields } from './log-queries.ts';

export const LOG_STREAM_POLL_MS = 1000;
export const LOG_STREAM_HEARTBEAT_MS = 15_000;
/** How often an open stream checks that its API key or sign-in still holds. */
export const LOG_STREAM_REVALIDATE_MS = 5_000;
const MAX_ROWS_PER_POLL = 500;
const COMMIT_OVERLAP_MS = 5000;

interface LogChangeRow extends LogRowFields {
  updated_at: Date | string;
  /** updated_at as PostgreSQL prints it: keeps the microseconds a JS Date would drop. */
  cursor: string;
}

/** Where a stream stands: the last row it sent, ordered by (updated_at, id). */
export interface StreamCursor {
  at: string;
  id: string;
}

const COLUMNS = `id, status, message_id, from_address, to_addresses, cc_addresses, subject, tags, project_id,
  template_version_id, captured, test_mode, attempts, error, sent_at, created_at, updated_at, updated_at::text AS cursor`;

async function latestLogs(sequelize: Sequelize, tenantId: string, count: number): Promise<LogChangeRow[]> {
  if (count === 0) return [];
  const rows = await sequelize.query<LogChangeRow>(
    `SELECT ${COLUMNS} FROM email_logs WHERE tenant_id = :tenantId ORDER BY updated_at DESC, id DESC LIMIT :count`,
    { type: QueryTypes.SELECT, replacements: { tenantId, count } },
  );
  return rows.reverse();
}

/**
 * Rows changed after the cursor, plus those of a short overlap before it: updated_at is set
 * before the writing transaction commits, so a row can become visible with a time a previous poll
 * already passed. The caller skips what it has sent.
 */
export async function logChangesSince(
  sequelize: Sequelize,
  tenantId: string,
  cursor: StreamCursor,
): Promise<LogChangeRow[]> {
  const replacements = {
    tenantId,
    at: cursor.at,
    id: cursor.id,
    overlap: COMMIT_OVERLAP_MS / 1000,
    limit: MAX_ROWS_PER_POLL,
  };
  const [late, after] = await Promise.all([
    sequelize.query<LogChangeRow>(
      `SELECT ${COLUMNS} FROM email_logs
        WHERE tenant_id = :tenantId
          AND updated_at >= CAST(:at AS timestamptz) - make_interval(secs => :overlap)
          AND (updated_at < CAST(:at AS timestamptz) OR (updated_at = CAST(:at AS timestamptz) AND id <= CAST(:id AS uuid)))
        ORDER BY updated_at, id LIMIT :limit`,
      { type: QueryTypes.SELECT, replacements },
    ),
    sequelize.query<LogChangeRow>(
      `SELECT ${COLUMNS} FROM email_logs
        WHERE tenant_id = :tenantId
          AND (updated_at > CAST(:at AS timestamptz) OR (updated_at = CAST(:at AS timestamptz) AND id > CAST(:id AS uuid)))
        ORDER BY updated_at, id LIMIT :limit`,
      { type: QueryTypes.SELECT, replacements },
    ),
  ]);
  return [...late, ...after];
}

async function databaseNow(sequelize: Sequelize): Promise<string> {
  const [row] = await sequelize.query<{ now: string }>('SELECT now()::text AS now', { type: QueryTypes.SELECT });
  return row.now;
}

/** The same fields as an entry of GET /emails/logs, plus updatedAt. */
function toEvent(row: LogChangeRow) {
  return { ...logSummaryOfRow(row), updatedAt: new Date(row.updated_at).toISOString() };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A timestamptz as PostgreSQL prints it, e.g. `2026-05-01 09:00:00.123456+00`. */
const PG_TIMESTAMP = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?([+-]\d{2}(:?\d{2})?|Z)?$/;

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

/** (updated_at, id) order; PostgreSQL prints timestamps of one session in one sortable form. */
function atOrBefore(row: LogChangeRow, cursor: StreamCursor): boolean {
  return row.cursor < cursor.at || (row.cursor === cursor.at && row.id <= cursor.id);
}

function parseLastEventId(header: string | string[] | undefined): StreamCursor | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return null;
  const separator = value.lastIndexOf('|');
  const at = value.slice(0, separator);
  const id = value.slice(separator + 1);
  if (separator < 1 || !UUID.test(id) || !PG_TIMESTAMP.test(at)) return null;
  return { at, id };
}

const StreamQuery = Type.Object({
  backlog: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 100, default: 20, description: 'how many recent logs to send first' }),
  ),
});

export default async function emailLogStreamRoutes(app: App, deps: ModuleDeps): Promise<void> {
  const open = new Set<ServerResponse>();
  // A stream never ends on its own; without this, app.close() would wait for every tail to quit.
  app.addHook('preClose', async () => {
    for (const response of open) response.end();
  });

  app.get(
    '/emails/logs/stream',
    {
      config: { access: access.keyOrSession('email:read') },
      schema: {
        tags: ['emails'],
        summary:
          'Live email log of the tenant as server-sent events (`event: email`, data = a log entry with updatedAt)',
        description:
          'Sends the latest `backlog` logs, then every change as it is committed. Resume with Last-Event-ID. ' +
          `A comment line every ${LOG_STREAM_HEARTBEAT_MS / 1000} s keeps proxies from closing the connection.`,
        querystring: StreamQuery,
        produces: ['text/event-stream'],
        response: {
          200: Type.String({ description: 'text/event-stream' }),
          400: ErrorBody,
          401: ErrorBody,
          403: ErrorBody,
        },
      },
    },
    async (request, reply) => {
      const { tenantId } = tenantOf(request);
      const sequelize = deps.db.sequelize;
      const resumeFrom = parseLastEventId(request.headers['last-event-id']);
      const backlog = resumeFrom ? [] : await latestLogs(sequelize, tenantId, request.query.backlog ?? 20);
      const newest = backlog.at(-1);
      let cursor: StreamCursor =
        resumeFrom ??
        (newest ? { at: newest.cursor, id: newest.id } : { at: await databaseNow(sequelize), id: ZERO_UUID });

      reply.hijack();
      const response = reply.raw;
      response.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      open.add(response);
      // Rows at or before where the stream started were the backlog or deliberately left out.
      const start: StreamCursor = cursor;
      // What this stream sent, by id → the updated_at it had, so the overlap re-reads send nothing twice.
      const sent = new Map<string, string>();
      const write = (rows: LogChangeRow[], polled: boolean) => {
        for (const row of rows) {
          if (sent.get(row.id) === row.cursor || (polled && atOrBefore(row, start))) continue;
          sent.set(row.id, row.cursor);
          response.write(`id: ${row.cursor}|${row.id}\nevent: email\ndata: ${JSON.stringify(toEvent(row))}\n\n`);
          if (!atOrBefore(row, cursor)) cursor = { at: row.cursor, id: row.id };
        }
        if (sent.size > 10_000) sent.clear();
      };
      response.write(`retry: 3000\n\n`);
      write(backlog, false);

      let closed = false;
      let pollTimer: NodeJS.Timeout | undefined;
      const heartbeat = setInterval(() => response.write(': heartbeat\n\n'), LOG_STREAM_HEARTBEAT_MS);
      const stop = () => {
        closed = true;
        clearTimeout(pollTimer);
        clearInterval(heartbeat);
        open.delete(response);
      };
      response.on('close', stop);

      let validatedAt = Date.now();
      const poll = async () => {
        if (Date.now() - validatedAt >= LOG_STREAM_REVALIDATE_MS) {
          validatedAt = Date.now();
          if (!(await credentialStillValid(app, deps.tenantState, request).catch(() => true))) {
            // Revoked key, ended sign-in or expired token: say why, then end the stream (a client that
            // reconnects gets the 401 with the sentence).
            response.write(
              `event: end\ndata: ${JSON.stringify({ code: 'CREDENTIAL_REVOKED', message: 'The API key or sign-in behind this stream was revoked or has expired.' })}\n\n`,
            );
            response.end();
            stop();
            return;
          }
        }
        try {
          write(await logChangesSince(sequelize, tenantId, cursor), true);
        } catch (error) {
          request.log.warn({ err: (error as Error).message }, 'email log stream poll failed');
        }
        if (!closed) pollTimer = setTimeout(() => void poll(), LOG_STREAM_POLL_MS);
      };
      pollTimer = setTimeout(() => void poll(), LOG_STREAM_POLL_MS);
    },
  );
}
