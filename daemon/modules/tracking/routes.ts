// Public routes reached from inside messages: the open pixel, click redirects and unsubscribe.
// The signed token is the only credential. Unsubscribe follows RFC 8058: POST acts (no cookies,
// no redirect); GET only shows a page with a button, because mail scanners prefetch links.
import { Type } from '@sinclair/typebox';
import type { App, AppDeps } from '../../app-types.ts';
import { access } from '../../access.ts';
import { ErrorBody } from '../../../shared/schemas/common.ts';
import { escapeHtml, sendPage } from '../../render/html-page.ts';
import { recordClick, recordOpen, unsubscribe, unsubscribeTarget } from './service.ts';

// A transparent 1×1 GIF.
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
// Tokens are long (a click token carries its URL): app.ts raises Fastify's parameter limit for them.
const TokenParams = Type.Object({ token: Type.String({ minLength: 10, maxLength: 8192 }) });
const Html = Type.String({ description: 'an HTML page' });

const linkNotValid = { lang: 'en', title: 'Link not valid', body: '<h1>This unsubscribe link is not valid.</h1>' };

export default async function trackingRoutes(app: App, deps: AppDeps): Promise<void> {
  const open = { access: access.public() };
  const tags = ['tracking'];
  // One-click unsubscribe posts a form body ("List-Unsubscribe=One-Click"); its content is not needed.
  app.addContentTypeParser(
    ['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'],
    { parseAs: 'string' },
    (_request, body, done) => done(null, body),
  );

  app.get(
    '/t/o/:token',
    {
      config: open,
      schema: {
        tags,
        summary: 'Open pixel: records email.opened and answers a 1×1 GIF',
        params: Type.Object({ token: Type.String({ maxLength: 8200 }) }),
        response: { 200: Type.Unknown() },
      },
    },
    async (request, reply) => {
      const token = request.params.token.replace(/\.gif$/, '');
      await recordOpen(deps, { userAgent: request.headers['user-agent'] }, { token }).catch((error: Error) =>
        request.log.warn({ err: error.message }, 'open not recorded'),
      );
      return reply.header('content-type', 'image/gif').header('cache-control', 'no-store, max-age=0').send(PIXEL);
    },
  );

  app.get(
    '/t/c/:token',
    {
      config: open,
      schema: {
        tags,
        summary: 'Click redirect: records email.clicked and answers 302 to the link of the message',
        params: TokenParams,
        response: { 302: Type.Null(), 404: ErrorBody },
      },
    },
    async (request, reply) => {
      const url = await recordClick(
        deps,
        { userAgent: request.headers['user-agent'] },
        { token: request.params.token },
      );
      if (!url)
        return reply
          .code(404)
          .send({ statusCode: 404, error: 'Not Found', code: 'NOT_FOUND', message: 'This link is not valid.' });
      return reply.header('cache-control', 'no-store').redirect(url, 302);
    },
  );

  app.get(
    '/u/:token',
    {
      config: open,
      schema: {
        tags,
        summary: 'Unsubscribe confirmation page (does not unsubscribe: scanners prefetch links)',
        params: TokenParams,
        response: { 200: Html, 404: Html },
      },
    },
    async (request, reply) => {
      const target = unsubscribeTarget(
        deps,
        { userAgent: request.headers['user-agent'] },
        { token: request.params.token },
      );
      if (!target) return sendPage(reply, 404, linkNotValid);
      return sendPage(reply, 200, {
        lang: 'en',
        title: 'Unsubscribe',
        body: `<h1>Unsubscribe</h1><p>Stop e-mail to <strong>${escapeHtml(target.address)}</strong>?</p><form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`,
      });
    },
  );

  app.post(
    '/u/:token',
    {
      config: open,
      schema: {
        tags,
        summary: 'One-click unsubscribe (RFC 8058): suppresses the address and emits contact.unsubscribed',
        params: TokenParams,
        response: { 200: Html, 404: Html },
      },
    },
    async (request, reply) => {
      if (!(await unsubscribe(deps, { userAgent: request.headers['user-agent'] }, { token: request.params.token })))
        return sendPage(reply, 404, linkNotValid);
      return sendPage(reply, 200, {
        lang: 'en',
        title: 'Unsubscribed',
        body: '<h1>You are unsubscribed.</h1><p>You will not receive these e-mails any more.</p>',
      });
    },
  );
}
