// The pages behind the links of system mail, for a person with a browser: GET shows a page (and
// never uses the link: mail scanners open links), POST from that page acts through the API's own
// services, then redirects to a result page (POST-redirect-GET). Bad input answers the form again
// with its message and a 4xx, a dead link a page that says what to do. HTML, not part of the JSON
// API: hidden from /openapi.json, whose /auth operations do the same work for programs.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App, AppDeps } from '../../app-types.ts';
import { access, authRateLimit } from '../../access.ts';
import { sendPage, type PageContent } from '../../render/html-page.ts';
import { callerOf } from '../auth/routes.ts';
import type { AuthCaller } from '../auth/service.ts';
import type { InvitationPreview } from '../tenants/invitations.ts';
import {
  formGuardCookie,
  formGuardHolds,
  formGuardKey,
  formNonce,
  issueFormGuard,
  type FormPurpose,
} from './form-guard.ts';
import { formPostOrigin } from './form-origin.ts';
import {
  acceptInvitationFromPage,
  accountLinkIsLive,
  describeInvitation,
  mailNewLink,
  resetPasswordFromPage,
  verifyEmailFromPage,
  type FormOutcome,
  type PagesDeps,
} from './service.ts';
import { pickPageLocale, type PageLocale } from './strings.ts';
import {
  deadLinkPage,
  donePage,
  foreignFormPage,
  invitationPage,
  NEW_LINK_PURPOSES,
  newLinkSentPage,
  resetPasswordPage,
  verifyEmailPage,
  type FormState,
} from './views.ts';

/** A form of these pages is a few fields; anything larger is not one of ours. */
const FORM_BODY_LIMIT_BYTES = 16 * 1024;

type Fields = Record<string, string>;

/** One query or form value as text: absent, repeated or odd-typed values read as ''. */
function textOf(source: unknown, name: string): string {
  const value = source && typeof source === 'object' ? (source as Record<string, unknown>)[name] : undefined;
  if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : '';
  return typeof value === 'string' ? value : '';
}

/** One flow behind a mail link: how to read its link, show its form, and act on it. */
interface AccountFlow<Preview> {
  purpose: FormPurpose;
  /** The name of the link's token in the query (as the mail has it) and in the form. */
  tokenName: 'token' | 'invitation';
  /** What the page shows of the link; null when it no longer works. */
  preview(caller: AuthCaller, token: string): Promise<Preview | null>;
  form(locale: PageLocale, state: FormState, preview: Preview, fields: Fields): PageContent;
  act(caller: AuthCaller, token: string, fields: Fields): Promise<FormOutcome>;
}

export default async function pageRoutes(app: App, deps: AppDeps): Promise<void> {
  const pagesDeps: PagesDeps = { ...deps, signAccessToken: (claims) => app.jwt.sign(claims) };
  const guardKey = formGuardKey(deps.secrets.linkSigningKey);
  const secureCookie = deps.config.publicUrl.startsWith('https:');
  const publicOrigin = new URL(deps.config.publicUrl).origin;
  const show = { access: access.public() };
  // Posting these forms is signing in by other means: the sign-in family's limit applies.
  const act = {
    access: access.public(),
    rateLimit: authRateLimit({
      authMax: deps.config.authRateLimitMax,
      authWindowMs: deps.config.authRateLimitWindowMs,
    }),
  };
  const schema = { hide: true };

  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT_BYTES },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
  );

  const localeOf = (request: FastifyRequest) =>
    pickPageLocale(textOf(request.query, 'lang'), callerOf(request).language);

  /** A fresh CSRF guard for a form of this link; sets the nonce cookie when the browser has none yet. */
  function guardFor(request: FastifyRequest, reply: FastifyReply, purpose: FormPurpose, token: string): string {
    const { nonce, fresh } = formNonce(request.headers.cookie);
    if (fresh) reply.header('set-cookie', formGuardCookie(nonce, secureCookie));
    return issueFormGuard({ key: guardKey, purpose, linkToken: token, nonce });
  }

  function register<Preview>(flow: AccountFlow<Preview>): void {
    const path = `/${flow.purpose}`;
    const dead = (reply: FastifyReply, locale: PageLocale) => sendPage(reply, 410, deadLinkPage(locale, flow.purpose));

    async function formAgain(
      request: FastifyRequest,
      reply: FastifyReply,
      statusCode: number,
      form: { token: string; fields: Fields; problem?: FormState['problem'] },
    ): Promise<FastifyReply> {
      const locale = localeOf(request);
      const preview = await flow.preview(callerOf(request), form.token);
      if (preview === null) return dead(reply, locale);
      const guard = guardFor(request, reply, flow.purpose, form.token);
      const state = { token: form.token, guard, problem: form.problem };
      return sendPage(reply, statusCode, flow.form(locale, state, preview, form.fields));
    }

    app.get(path, { config: show, schema }, async (request, reply) =>
      formAgain(request, reply, 200, { token: textOf(request.query, flow.tokenName), fields: {} }),
    );

    app.post(path, { config: act, schema, bodyLimit: FORM_BODY_LIMIT_BYTES }, async (request, reply) => {
      // Browsers name where a request comes from: a form of ours is always posted from its own page.
      // Refused before anything else, and without a new form, so such a post cannot even replace
      // the nonce cookie of the person's open page.
      const site = request.headers['sec-fetch-site'];
      if (site !== undefined && site !== 'same-origin') return sendPage(reply, 403, foreignFormPage(localeOf(request)));
      // And the Origin (or Referer) it names must be PUBLIC_URL's (form-origin.ts), as OWASP recommends.
      const origin = formPostOrigin(request.headers, publicOrigin);
      if (!origin.ours)
        return sendPage(reply, 403, foreignFormPage(localeOf(request), { seen: origin.seen, expected: publicOrigin }));
      const fields: Fields = request.body && typeof request.body === 'object' ? (request.body as Fields) : {};
      const token = textOf(fields, flow.tokenName);
      const guarded = formGuardHolds({
        key: guardKey,
        purpose: flow.purpose,
        linkToken: token,
        cookieHeader: request.headers.cookie,
        field: textOf(fields, 'guard'),
      });
      if (!guarded) return formAgain(request, reply, 403, { token, fields, problem: 'form-expired' });
      const outcome = await flow.act(callerOf(request), token, fields);
      switch (outcome.kind) {
        case 'done':
          // Relative, so it stays under whatever path a proxy mounts the service at.
          return reply.redirect(`${flow.purpose}/done?lang=${localeOf(request)}`, 303);
        case 'dead-link':
          return dead(reply, localeOf(request));
        case 'problem':
          return formAgain(request, reply, outcome.problem === 'email-taken' ? 409 : 400, {
            token,
            fields,
            problem: outcome.problem,
          });
      }
    });

    app.get(`${path}/done`, { config: show, schema }, async (request, reply) =>
      sendPage(reply, 200, donePage(localeOf(request), flow.purpose)),
    );
  }

  // A dead reset or verification link's form: mails a new link through the API's own services (which
  // answer the same whether or not the address has an account), then says so (POST-redirect-GET).
  for (const purpose of NEW_LINK_PURPOSES) {
    app.post(
      `/${purpose}/new-link`,
      { config: act, schema, bodyLimit: FORM_BODY_LIMIT_BYTES },
      async (request, reply) => {
        const site = request.headers['sec-fetch-site'];
        const origin = formPostOrigin(request.headers, publicOrigin);
        if ((site !== undefined && site !== 'same-origin') || !origin.ours)
          return sendPage(
            reply,
            403,
            foreignFormPage(localeOf(request), origin.ours ? undefined : { seen: origin.seen, expected: publicOrigin }),
          );
        const email = textOf(request.body, 'email').trim();
        // A mail that cannot be sent is logged, not shown: the page says the same either way.
        if (email)
          await mailNewLink(pagesDeps, callerOf(request), { purpose, email }).catch((error: unknown) =>
            request.log.error({ err: error }, 'account mail could not be sent'),
          );
        return reply.redirect(`new-link/sent?lang=${localeOf(request)}`, 303);
      },
    );
    app.get(`/${purpose}/new-link/sent`, { config: show, schema }, async (request, reply) =>
      sendPage(reply, 200, newLinkSentPage(localeOf(request))),
    );
  }

  register<true>({
    purpose: 'reset-password',
    tokenName: 'token',
    preview: async (caller, token) =>
      (await accountLinkIsLive(pagesDeps, caller, { purpose: 'reset-password', token })) || null,
    form: (locale, state) => resetPasswordPage(locale, state),
    act: (caller, token, fields) =>
      resetPasswordFromPage(pagesDeps, caller, {
        token,
        newPassword: textOf(fields, 'password'),
        repeatedPassword: textOf(fields, 'repeatedPassword'),
      }),
  });

  register<true>({
    purpose: 'verify-email',
    tokenName: 'token',
    preview: async (caller, token) =>
      (await accountLinkIsLive(pagesDeps, caller, { purpose: 'verify-email', token })) || null,
    form: (locale, state) => verifyEmailPage(locale, state),
    act: (caller, token) => verifyEmailFromPage(pagesDeps, caller, { token }),
  });

  register<InvitationPreview>({
    purpose: 'register',
    tokenName: 'invitation',
    preview: (caller, token) => describeInvitation(pagesDeps, caller, { token }),
    form: (locale, state, invitation, fields) =>
      invitationPage(locale, { ...state, invitation, name: textOf(fields, 'name') }),
    act: (caller, token, fields) =>
      acceptInvitationFromPage(pagesDeps, caller, {
        token,
        name: textOf(fields, 'name'),
        password: textOf(fields, 'password'),
        repeatedPassword: textOf(fields, 'repeatedPassword'),
      }),
  });
}
