// GET /emails/logs/stream: the tenant's email log as server-sent events, for `svc logs tail`.
// The stream itself (backlog, polling, framing, revalidation) is ./log-stream.ts; this file opens
// the response and ends open streams when the app closes.
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import type { App, ModuleDeps } from '../../app-types.ts';
import { access, tenantOf } from '../../access.ts';
import { ErrorBody } from '../../../shared/schemas/common.ts';
import { LOG_STREAM_HEARTBEAT_MS, logStreamStart, parseLastEventId, runLogStream } from './log-stream.ts';

const StreamQuery = Type.Object({
  backlog: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 100, default: 20, description: 'how many recent logs to send first' }),
  ),
});

/**
 * The module's deps and a port to the auth plugin: whether the credential a request came with still
 * holds (plugins/auth.ts's credentialStillValid, handed in by app.ts; modules/ import nothing of plugins/).
 */
export interface LogStreamDeps extends ModuleDeps {
  credentialStillValid(request: FastifyRequest): Promise<boolean>;
}

export default async function emailLogStreamRoutes(app: App, deps: LogStreamDeps): Promise<void> {
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
      const ctx = tenantOf(request);
      const start = await logStreamStart(deps, ctx, {
        resumeFrom: parseLastEventId(request.headers['last-event-id']),
        backlog: request.query.backlog ?? 20,
      });

      reply.hijack();
      const response = reply.raw;
      response.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      open.add(response);
      const stream = runLogStream(deps, ctx, {
        start,
        sink: { write: (text) => response.write(text), end: () => response.end() },
        credentialStillValid: () => deps.credentialStillValid(request),
        log: request.log,
      });
      response.on('close', () => {
        stream.stop();
        open.delete(response);
      });
    },
  );
}
