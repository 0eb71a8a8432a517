// Provider notification receivers (spec §4 "POST /webhooks/<inbound-provider>"): Amazon SES through
// SNS, and a plain JSON DSN for relays. Public routes, authenticated by the platform's
// INBOUND_WEBHOOK_TOKEN given as `?token=` or as the HTTP basic auth password.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { App, AppDeps } from '../../app-types.ts';
import { access } from '../../access.ts';
import { ServiceUnavailableError, UnauthorizedError, ValidationError } from '../../errors.ts';
import { ErrorBody } from '../../../shared/schemas/common.ts';
import { InboundAck, InboundQuery, SmtpDsnBody, SnsEnvelopeBody } from '../../../shared/schemas/webhooks.ts';
import {
  applyProviderReport,
  isAmazonSubscribeUrl,
  parseSesNotification,
  UnreadableNotificationError,
} from './service.ts';
import { enqueueSnsConfirmation } from './sns-confirm.ts';

function presentedToken(request: FastifyRequest): string | null {
  const query = request.query as { token?: unknown } | undefined;
  if (typeof query?.token === 'string' && query.token !== '') return query.token;
  const header = request.headers.authorization;
  if (header?.toLowerCase().startsWith('basic ')) {
    const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon >= 0 ? decoded.slice(colon + 1) : null;
  }
  return null;
}

/** Equal-time comparison of the digests, so neither length nor prefix of the token leaks. */
function tokensMatch(presented: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(presented), digest(expected));
}

export default async function inboundRoutes(app: App, deps: AppDeps): Promise<void> {
  const { sequelize } = deps.db;
  const expected = deps.config.inboundWebhookToken;
  const tags = ['webhooks'];
  const open = { access: access.public() };
  const responses = { 200: InboundAck, 400: ErrorBody, 401: ErrorBody, 503: ErrorBody };

  // Runs before the body is read: an unauthenticated caller costs us no parsing.
  app.addHook('onRequest', async (request) => {
    if (expected === null) {
      throw new ServiceUnavailableError(
        'inbound receivers are not configured: set INBOUND_WEBHOOK_TOKEN',
        'INBOUND_NOT_CONFIGURED',
      );
    }
    const token = presentedToken(request);
    if (token === null || !tokensMatch(token, expected)) {
      throw new UnauthorizedError(
        'Send the inbound webhook token as ?token= or as the HTTP basic auth password.',
        'INBOUND_TOKEN_INVALID',
      );
    }
  });

  // SNS posts JSON labelled text/plain; in this scope only, such a body is parsed as JSON.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, JSON.parse(body as string));
    } catch {
      done(new ValidationError('The body is not JSON: expected an Amazon SNS message.'), undefined);
    }
  });

  app.post(
    '/webhooks/ses',
    {
      config: open,
      // The largest message Amazon SNS delivers.
      bodyLimit: 256 * 1024,
      schema: {
        tags,
        summary: 'Amazon SES notifications through SNS: subscription confirmation, Bounce, Complaint, Delivery',
        querystring: InboundQuery,
        body: SnsEnvelopeBody,
        response: responses,
      },
    },
    async (request) => {
      const body = request.body;
      if (body.Type === 'SubscriptionConfirmation') {
        if (!body.SubscribeURL || !isAmazonSubscribeUrl(body.SubscribeURL)) {
          throw new ValidationError('SubscribeURL must be an https sns.<region>.amazonaws.com URL.', [
            { field: 'SubscribeURL', message: 'not an Amazon SNS URL' },
          ]);
        }
        await enqueueSnsConfirmation(sequelize, body.SubscribeURL);
        return { ok: true as const, processed: 0, subscription: 'confirmation queued' };
      }
      // With SNS raw message delivery the SES notification is the body itself.
      const message =
        body.Type === undefined && (body.notificationType || body.eventType) ? JSON.stringify(body) : body.Message;
      if (body.Type !== undefined && body.Type !== 'Notification') return { ok: true as const, processed: 0 };
      if (typeof message !== 'string') {
        throw new ValidationError('A Notification needs a Message holding the SES notification.', [
          { field: 'Message', message: 'missing' },
        ]);
      }
      try {
        const report = parseSesNotification(message);
        return {
          ok: true as const,
          processed: report ? await applyProviderReport({ ...deps, log: request.log }, report, { source: 'ses' }) : 0,
        };
      } catch (error) {
        if (error instanceof UnreadableNotificationError)
          throw new ValidationError(error.message, [{ field: 'Message', message: error.message }]);
        throw error;
      }
    },
  );

  app.post(
    '/webhooks/smtp-dsn',
    {
      config: open,
      schema: {
        tags,
        summary: "A relay's delivery status notification as { messageId, type, bounceType?, diagnostic? }",
        querystring: InboundQuery,
        body: SmtpDsnBody,
        response: responses,
      },
    },
    async (request) => {
      const { messageId, type, bounceType, diagnostic } = request.body;
      const processed = await applyProviderReport(
        { ...deps, log: request.log },
        { messageIds: [messageId], type, bounceType, diagnostic: diagnostic ?? null },
        { source: 'smtp-dsn' },
      );
      return { ok: true as const, processed };
    },
  );
}
