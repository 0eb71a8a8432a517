// One error envelope for every answer that is not a success (CONTRACT.md, "Errors").
import fp from 'fastify-plugin';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ConnectionError } from 'sequelize';
import { ApiError, STATUS_TEXT, type ErrorDetail } from '../errors.ts';
import { NO_CONTROL_CHARACTERS, type ErrorBody } from '../../shared/schemas/common.ts';
import { bodyTooLargeError } from './request-body.ts';

interface AjvIssue {
  instancePath?: string;
  message?: string;
  keyword?: string;
  params?: Record<string, unknown>;
}

function fieldOf(issue: AjvIssue, context: string | undefined): string {
  const where = (issue.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
  const missing = issue.params?.missingProperty ?? issue.params?.additionalProperty;
  const leaf = typeof missing === 'string' ? missing : '';
  const path = [where, leaf].filter(Boolean).join('.');
  const prefix = context && context !== 'body' ? `${context}.` : '';
  return prefix + (path || (context ?? 'body'));
}

function describe(issue: AjvIssue): string {
  if (issue.keyword === 'required') return 'is required';
  if (issue.keyword === 'additionalProperties') return 'is not an accepted field';
  if (issue.keyword === 'pattern' && issue.params?.pattern === NO_CONTROL_CHARACTERS)
    return 'must not contain control characters (line breaks, tabs and other C0/C1 controls)';
  return issue.message ?? 'is invalid';
}

export function validationDetails(issues: AjvIssue[], context?: string): ErrorDetail[] {
  return issues.map((issue) => ({ field: fieldOf(issue, context), message: describe(issue) }));
}

function body(statusCode: number, code: string, message: string, details?: ErrorDetail[]): ErrorBody {
  return { statusCode, error: STATUS_TEXT[statusCode] ?? 'Error', code, message, ...(details ? { details } : {}) };
}

/** Fastify's own error codes, mapped to what a client can act on. */
const FRAMEWORK_ERRORS: Record<string, { status: number; code: string; message: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, code: 'INVALID_JSON', message: 'The request body is not valid JSON.' },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    status: 400,
    code: 'INVALID_JSON',
    message: 'The request says it carries JSON but the body is empty.',
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
    message: 'Send the body as application/json.',
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    status: 400,
    code: 'BAD_REQUEST',
    message: 'The Content-Length header does not match the body.',
  },
  FST_ERR_CTP_INVALID_TYPE: {
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
    message: 'Send the body as application/json.',
  },
  FST_ERR_BAD_URL: { status: 400, code: 'BAD_URL', message: 'The request URL is malformed.' },
  FST_ERR_ASYNC_CONSTRAINT: { status: 400, code: 'BAD_REQUEST', message: 'The request could not be routed.' },
  FST_JWT_NO_AUTHORIZATION_IN_HEADER: {
    status: 401,
    code: 'UNAUTHORIZED',
    message: 'Authentication is required: send Authorization: Bearer <token or API key>.',
  },
};

/** The database is unreachable (refused, timed out, pool closed): a 503, not a bug. */
function databaseUnavailable(error: Error): boolean {
  return (
    error instanceof ConnectionError ||
    /connection manager was closed|Connection terminated unexpectedly/.test(error.message)
  );
}

export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  return reply.code(error.statusCode).send(body(error.statusCode, error.code, error.message, error.details));
}

async function errorsPlugin(app: FastifyInstance): Promise<void> {
  app.setErrorHandler(
    (
      error: FastifyError & { validationContext?: string; headers?: Record<string, string> },
      request: FastifyRequest,
      reply: FastifyReply,
    ) => {
      if (error instanceof ApiError) return sendError(reply, error);
      if (error.validation) {
        const details = validationDetails(error.validation as AjvIssue[], error.validationContext);
        const first = details[0];
        const message = first ? `Invalid request: ${first.field} ${first.message}.` : 'Invalid request.';
        return reply.code(400).send(body(400, 'VALIDATION_FAILED', message, details));
      }
      // Fastify's own parsers (forms, raw bodies) refuse past the route's limit: name that limit.
      if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
        return sendError(reply, bodyTooLargeError(request.routeOptions.bodyLimit));
      const known = error.code ? FRAMEWORK_ERRORS[error.code] : undefined;
      if (known) return reply.code(known.status).send(body(known.status, known.code, known.message));
      const status = error.statusCode ?? 500;
      if (status >= 400 && status < 500) {
        // Plugins (jwt, rate-limit, ...) raise their own 4xx: keep the status, use our envelope.
        if (error.headers) reply.headers(error.headers);
        return reply.code(status).send(body(status, error.code ?? 'BAD_REQUEST', error.message));
      }
      if (databaseUnavailable(error)) {
        request.log.error({ err: error.message, route: request.routeOptions.url }, 'database unavailable');
        return reply
          .code(503)
          .send(body(503, 'DATABASE_UNAVAILABLE', 'The database is not answering; try again shortly.'));
      }
      request.log.error({ err: error, route: request.routeOptions.url }, 'unhandled error');
      return reply
        .code(500)
        .send(body(500, 'INTERNAL', 'Something went wrong on our side; the error has been logged.'));
    },
  );

  app.setNotFoundHandler((request, reply) => {
    reply
      .code(404)
      .send(body(404, 'ROUTE_NOT_FOUND', `There is no ${request.method} ${request.url.split('?')[0]} endpoint.`));
  });
}

export default fp(errorsPlugin, { name: 'errors' });
