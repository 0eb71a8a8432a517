// How much of a request body the daemon reads, and how (docs/security.md § Request bodies).
// - Each route takes the bytes it needs: a route that declares its own `bodyLimit` keeps it; one with
//   a body schema takes JSON_BODY_LIMIT_BYTES, one without takes NO_BODY_LIMIT_BYTES. A 413 names
//   the limit of the route it came from.
// - JSON bodies are read by the parser below, not Fastify's: it counts the bytes against the route's
//   limit and the body's shape (json-shape.ts: depth and members) while they arrive, and refuses as
//   soon as either is passed, before JSON.parse ever sees the body. The parse itself is Fastify's.
// - Credentials are checked before any of this (auth.ts, preParsing): a refused request is answered
//   without its body being read, and its connection is closed rather than kept alive, so the rest of
//   an unread body is never read either.
import fp from 'fastify-plugin';
import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { ApiError } from '../errors.ts';
import { MAX_JSON_DEPTH, MAX_JSON_MEMBERS } from '../../shared/constants.ts';
import { JsonShapeScanner, type JsonShapeProblem } from './json-shape.ts';
import { tooDeepError } from './json-body.ts';

/** A route without a body schema (DELETE, publish, verify …): room for `{}` or a one-click form, no more. */
export const NO_BODY_LIMIT_BYTES = 1024;
/** A route with a body schema and no limit of its own: every such schema's fields fit many times over. */
export const JSON_BODY_LIMIT_BYTES = 64 * 1024;
/** Bytes of a JSON body scanned in one turn of the event loop (json-shape.ts: well under a millisecond). */
const SCAN_SLICE_BYTES = 8 * 1024;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Most members (object keys and array items) a JSON body may hold; MAX_JSON_MEMBERS if unset. */
    maxJsonMembers?: number;
  }
}

/** `15 MB`, `64 KB`, `1 KB`: the units the limits are written in (1 MB = 1024 × 1024 bytes). */
export function describeBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KB`;
  return `${bytes} bytes`;
}

export function bodyTooLargeError(limitBytes: number): ApiError {
  return new ApiError(
    413,
    'BODY_TOO_LARGE',
    `The request body is larger than the ${describeBytes(limitBytes)} (${limitBytes.toLocaleString('en-US')} bytes) this endpoint accepts.`,
  );
}

function shapeError(problem: JsonShapeProblem | null): ApiError | null {
  if (problem === null) return null;
  if (problem.kind === 'depth') return tooDeepError(problem.path);
  const most = problem.maxMembers.toLocaleString('en-US');
  return new ApiError(
    413,
    'BODY_TOO_LARGE',
    `The body holds more than the ${most} members (object keys and array items) this endpoint accepts.`,
    [{ field: '(body)', message: `holds more than ${most} members` }],
  );
}

type Done = (error: Error | null, body?: unknown) => void;

/**
 * Reads a JSON body as Fastify's own parser does (the route's byte limit, Content-Length checked
 * against what came), scanning each chunk as it comes; then parses it with Fastify's JSON parser.
 */
function jsonParser(parse: (request: FastifyRequest, body: string, done: Done) => void) {
  return (request: FastifyRequest, payload: IncomingMessage, done: Done): void => {
    // An unknown route answers 404 whatever the body: it is not read.
    if (request.is404) return done(null, undefined);
    const limit = request.routeOptions.bodyLimit;
    const declared = Number(request.headers['content-length']);
    if (declared > limit) return done(bodyTooLargeError(limit));
    const config = request.routeOptions.config;
    const scanner = new JsonShapeScanner(MAX_JSON_DEPTH, config.maxJsonMembers ?? MAX_JSON_MEMBERS);
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    let scanning = false;
    let ended = false;
    const stop = () => {
      settled = true;
      payload.removeListener('data', onData);
      payload.removeListener('end', onEnd);
      payload.removeListener('error', onError);
    };
    const refuse = (problem: ApiError) => {
      // Nothing more of it is read: the answer closes the connection (below).
      stop();
      payload.pause();
      done(problem);
    };
    // A chunk (64 KB off a socket) is scanned a slice per turn of the event loop, the body paused
    // meanwhile: twenty many-keyed bodies arriving together then take turns with every other request
    // instead of holding the loop for twenty chunks at once (bench/hostile-bodies.ts).
    function scanFrom(bytes: Buffer, offset: number) {
      if (settled) return;
      const problem = shapeError(scanner.feed(bytes.subarray(offset, offset + SCAN_SLICE_BYTES)));
      if (problem) return refuse(problem);
      if (offset + SCAN_SLICE_BYTES < bytes.length)
        return void setImmediate(scanFrom, bytes, offset + SCAN_SLICE_BYTES);
      scanning = false;
      // The stream may end while its last chunk is still being scanned: the parse waits for the scan.
      if (ended) finish();
      else if (payload.isPaused()) payload.resume();
    }
    function onData(chunk: Buffer | string) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      received += bytes.length;
      if (received > limit) return refuse(bodyTooLargeError(limit));
      chunks.push(bytes);
      scanning = true;
      if (bytes.length > SCAN_SLICE_BYTES) payload.pause();
      scanFrom(bytes, 0);
    }
    function onEnd() {
      ended = true;
      if (!scanning) finish();
    }
    function finish() {
      stop();
      if (!Number.isNaN(declared) && received !== declared)
        return done(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
      parse(request, Buffer.concat(chunks, received).toString('utf8'), done);
    }
    function onError(error: Error & { statusCode?: number }) {
      stop();
      if (!(typeof error.statusCode === 'number' && error.statusCode >= 400)) error.statusCode = 400;
      done(error);
    }
    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', onError);
    payload.resume();
  };
}

async function requestBodyPlugin(app: FastifyInstance): Promise<void> {
  app.addHook('onRoute', (route) => {
    if (route.bodyLimit !== undefined) return;
    route.bodyLimit = route.schema?.body ? JSON_BODY_LIMIT_BYTES : NO_BODY_LIMIT_BYTES;
  });

  const parse = app.getDefaultJsonParser('error', 'error') as (
    request: FastifyRequest,
    body: string,
    done: Done,
  ) => void;
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', jsonParser(parse));

  // A request answered before its body was read (401, 403, 429, 404, a body refused half-way): the
  // rest of that body is not read. Node would otherwise read and drop it to keep the connection
  // alive; closing it ends the upload (HTTP/2 has no such header: a stream is reset on its own).
  app.addHook('onSend', async (request, reply) => {
    if (!request.raw.complete && request.raw.httpVersionMajor === 1) reply.header('connection', 'close');
  });
}

export default fp(requestBodyPlugin, { name: 'request-body' });
