// Emails (spec §4 "Emails"): send, batch, logs, log detail, resend. API key with email:send /
// email:read, or JWT. Send and batch take bodies up to 15 MB (attachments); everything else 1 MB.
import type { App, ModuleDeps } from '../../app-types.ts';
import { access } from '../../access.ts';
import { tenantOf } from '../../access.ts';
import { ErrorBody, IdParams } from '../../../shared/schemas/common.ts';
import {
  BatchAccepted,
  BatchBody,
  EmailLogDetail,
  LogsPage,
  LogsQuery,
  SendAccepted,
  SendEmailBody,
  SendQuery,
} from '../../../shared/schemas/emails.ts';
import { acceptSends } from './service.ts';
import { replyWithSend } from './reply.ts';
import { buildBatchSends } from './batch.ts';
import { getEmailLog, listEmailLogs, resendEmailLog } from './logs.ts';
import { normalizeSend, SEND_BODY_LIMIT_BYTES } from './validate.ts';
import { renderInlineLiquid } from './inline-liquid.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody };
const sendErrors = { ...errors, 409: ErrorBody, 413: ErrorBody, 422: ErrorBody, 429: ErrorBody };

export function idempotencyKeyOf(header: string | string[] | undefined, field: string | undefined): string | null {
  const value = Array.isArray(header) ? header[0] : header;
  return value && value.trim() !== '' ? value.trim().slice(0, 255) : (field ?? null);
}

export default async function emailRoutes(app: App, deps: ModuleDeps): Promise<void> {
  const tags = ['emails'];
  const send = { access: access.keyOrSession('email:send') };
  const read = { access: access.keyOrSession('email:read') };

  app.post(
    '/emails/send',
    {
      config: send,
      bodyLimit: SEND_BODY_LIMIT_BYTES,
      schema: {
        tags,
        summary: 'Send one message: 202 QUEUED, or with ?sync=true delivered before the answer (SENT or FAILED)',
        querystring: SendQuery,
        body: SendEmailBody,
        response: { 200: SendAccepted, 202: SendAccepted, ...sendErrors },
      },
    },
    async (request, reply) => {
      const { idempotencyKey, ...input } = request.body;
      const key = idempotencyKeyOf(request.headers['idempotency-key'], idempotencyKey);
      const result = await acceptSends(deps, tenantOf(request), {
        sends: [normalizeSend(await renderInlineLiquid(input))],
        shape: 'single',
        sync: request.query.sync === 'true',
        idempotencyKey: key,
        idempotencyFingerprint: { path: 'send', sync: request.query.sync === 'true', body: input },
      });
      return replyWithSend(reply, result);
    },
  );

  app.post(
    '/emails/batch',
    {
      config: send,
      bodyLimit: SEND_BODY_LIMIT_BYTES,
      schema: {
        tags,
        summary:
          'Send the same message to 1–100 recipients, each with its own data; suppressed or invalid recipients are listed in rejected',
        body: BatchBody,
        response: { 202: BatchAccepted, ...sendErrors },
      },
    },
    async (request, reply) => {
      const { idempotencyKey } = request.body;
      const ctx = tenantOf(request);
      const { sends, rejected } = await buildBatchSends(deps, ctx, request.body);
      const result = await acceptSends(deps, ctx, {
        sends,
        shape: 'batch',
        rejected,
        idempotencyKey: idempotencyKeyOf(request.headers['idempotency-key'], idempotencyKey),
        idempotencyFingerprint: { path: 'batch', body: request.body },
      });
      return replyWithSend(reply, result);
    },
  );

  app.get(
    '/emails/logs',
    {
      config: read,
      schema: {
        tags,
        summary:
          'Email logs, newest first; filter by status, to, messageId, since, until, tag; page (up to 10,000 logs deep) or walk with cursor',
        description:
          'meta.total is exact up to 1,000 matches when counting them is cheap, otherwise an estimate (meta.totalIsEstimate: true); the last page always has the exact total. page × limit above 10,000 answers 400: read further with cursor = meta.nextCursor.',
        querystring: LogsQuery,
        response: { 200: LogsPage, ...errors },
      },
    },
    async (request) => listEmailLogs(deps, tenantOf(request), request.query),
  );

  app.get(
    '/emails/logs/:id',
    {
      config: read,
      schema: {
        tags,
        summary: 'One log: bodies, headers as sent, the events timeline, and the raw message when it was captured',
        params: IdParams,
        response: { 200: EmailLogDetail, ...errors, 404: ErrorBody },
      },
    },
    async (request) => getEmailLog(deps, tenantOf(request), { id: request.params.id }),
  );

  app.post(
    '/emails/logs/:id/resend',
    {
      config: send,
      schema: {
        tags,
        summary: 'Send a logged message again as a new send through the whole pipeline (new id, new idempotency)',
        params: IdParams,
        response: { 200: SendAccepted, 202: SendAccepted, ...sendErrors, 404: ErrorBody },
      },
    },
    async (request, reply) => {
      const result = await resendEmailLog(deps, tenantOf(request), { id: request.params.id });
      // The spec answers resend with 200.
      return replyWithSend(reply, result, 200);
    },
  );
}
