// SMTP submission (RFC 6409): apps with an "SMTP settings" page send through the same pipeline as
// `POST /emails/send`. AUTH PLAIN or LOGIN with an API key holding `email:send` as the password
// (the username is free text; the docs say `svc`), only over TLS (STARTTLS, or the implicit-TLS
// port) except on a loopback listener in development. Each message: parsed, mapped to the send the
// HTTP body would make (./submission-message.ts), accepted by acceptSends; `250 … queued as <id>`.
// With direct delivery, a message the service need not compose leaves as it came: signed here and
// spooled by its accept (./submission-spool.ts; the rule: spoolsAtAccept in emails/service.ts).
//
// Limits: SIZE = the HTTP send body limit, 50 recipients (the API's), a number of open connections
// per API key on this node, and failed AUTHs counted per client address in the sign-in limit's
// numbers (AUTH_RATE_LIMIT_MAX per AUTH_RATE_LIMIT_WINDOW_MS) in the rate-limit store.
import { errorText } from '../errors.ts';
import { isIP } from 'node:net';
import {
  SMTPServer,
  type SMTPServerAuthentication,
  type SMTPServerDataStream,
  type SMTPServerSession,
} from 'smtp-server';
import type { Logger } from 'pino';
import type { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import type { Database } from '../db/index.ts';
import type { Secrets } from '../secrets.ts';
import type { TlsPair } from '../tls.ts';
import { MAX_RECIPIENTS_PER_SEND } from '../../shared/constants.ts';
import { apiKeyTenantContext, type TenantContext } from '../context.ts';
import { BLOCKED_MESSAGE } from '../plugins/auth.ts';
import { createAttemptCounter, type AttemptCounter } from '../plugins/rate-limit.ts';
import { looksLikeApiKey } from '../modules/auth/api-key-format.ts';
import { resolveApiKey, type ResolvedApiKey } from '../modules/auth/credentials.ts';
import type { TenantStateCache } from '../modules/tenants/state-cache.ts';
import { acceptSends } from '../modules/emails/service.ts';
import type { AcceptGroups } from '../modules/emails/accept-groups.ts';
import type { MailResources } from '../mail/resources.ts';
import { SEND_BODY_LIMIT_BYTES } from '../modules/emails/validate.ts';
import { parseSubmission, smtpReplyOf, type SmtpReply } from './submission-message.ts';
import { spooledSubmission } from './submission-spool.ts';
import type { SendContextCache } from '../modules/emails/send-context.ts';
import type { SpooledMessageAnnouncer } from '../mta/spooled-messages.ts';

/** The mail resources (created by startSmtpEdge) check the sender's domain when a message is accepted. */
export interface SmtpDeps extends MailResources {
  config: Config;
  db: Database;
  redis: Redis | null;
  secrets: Secrets;
  redisPrefix: string;
  log: Logger;
  /** Keys and tenant state, cached as the API caches them (created by startSmtpEdge). */
  tenantState: TenantStateCache;
  /**
   * Concurrent submissions of a tenant share one accept statement and one commit, as the API's sends
   * do (created by startSmtpEdge): at 10 connections each message committed alone was ~11 % of the
   * edge's CPU and a WAL flush per message.
   */
  acceptGroups: AcceptGroups;
  /**
   * Sender domains' DKIM keys and Return-Paths as the worker reads them (created by startSmtpEdge): a
   * message that leaves as it came is signed here (./submission-spool.ts).
   */
  sendContext: SendContextCache;
  /**
   * Given when this process runs the MTA thread too (ROLE=all with DELIVERY=direct; created by
   * startSmtpEdge): a spooled submission is handed to it in memory as well (./submission-spool.ts).
   */
  spooledMessages: SpooledMessageAnnouncer | null;
}

const SEND_SCOPE = 'email:send';
const AUTH_REQUIRED =
  'Authentication required: STARTTLS, then AUTH PLAIN or LOGIN with an API key (email:send) as the password; any username, e.g. svc.';

/** Who signed in on a connection (smtp-server keeps it as session.user). */
interface SubmissionUser {
  key: ResolvedApiKey;
  /** Kept to check at each message that the key has not been revoked meanwhile. */
  token: string;
}

/** State both submission listeners share: connections per key and the failed-AUTH counter. */
export interface SubmissionState {
  openByKey: Map<string, number>;
  /** session id → the key it counts against (not session.user, which STARTTLS clears). */
  keyOfSession: Map<string, string>;
  failedAuth: AttemptCounter;
}

export function createSubmissionState(deps: SmtpDeps): SubmissionState {
  return {
    openByKey: new Map(),
    keyOfSession: new Map(),
    failedAuth: createAttemptCounter({
      redis: deps.redis,
      namespace: deps.redisPrefix,
      max: deps.config.authRateLimitMax,
      windowMs: deps.config.authRateLimitWindowMs,
    }),
  };
}

function smtpError(reply: SmtpReply): Error {
  return Object.assign(new Error(reply.message), { responseCode: reply.code });
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}

/** Plain-text AUTH is only for a development daemon that listens on loopback alone. */
export function insecureAuthAllowed(config: Pick<Config, 'nodeEnv' | 'smtpSubmissionHost'>): boolean {
  return config.nodeEnv === 'development' && isLoopback(config.smtpSubmissionHost);
}

const userOf = (session: SMTPServerSession) => session.user as SubmissionUser | undefined;

/** The refusal of a credential, or null with the key when it may send. */
async function checkKey(
  cache: TenantStateCache,
  token: string,
): Promise<{ key: ResolvedApiKey } | { refusal: string; counts: boolean }> {
  const key = looksLikeApiKey(token) ? await resolveApiKey(cache, token) : null;
  if (!key) {
    return {
      refusal:
        'The password must be an API key (svc_live_… or svc_test_…) that is valid and not revoked; the username can be anything, e.g. svc.',
      counts: true,
    };
  }
  if (!key.scopes.includes(SEND_SCOPE))
    return { refusal: `This API key lacks the "${SEND_SCOPE}" scope.`, counts: true };
  if (key.tenantStatus === 'blocked') return { refusal: BLOCKED_MESSAGE, counts: false };
  return { key };
}

async function authenticate(
  deps: SmtpDeps,
  state: SubmissionState,
  auth: SMTPServerAuthentication,
  session: SMTPServerSession,
): Promise<SubmissionUser> {
  const throttleKey = `smtp-auth:${session.remoteAddress}`;
  const before = await state.failedAuth.read(throttleKey);
  if (before.current >= state.failedAuth.max) {
    const seconds = Math.max(1, Math.ceil(before.ttl / 1000));
    throw smtpError({
      code: 454,
      message: `Too many failed sign-ins from ${session.remoteAddress}: the limit is ${state.failedAuth.max}; try again in ${seconds} s.`,
    });
  }
  const token = auth.password ?? '';
  const checked = await checkKey(deps.tenantState, token);
  if ('refusal' in checked) {
    if (checked.counts) await state.failedAuth.hit(throttleKey);
    throw smtpError({ code: 535, message: checked.refusal });
  }
  const open = state.openByKey.get(checked.key.id) ?? 0;
  const limit = deps.config.smtpSubmissionMaxConnectionsPerKey;
  if (open >= limit) {
    throw smtpError({
      code: 454,
      message: `This API key already holds ${open} SMTP connections, the most allowed (SMTP_SUBMISSION_MAX_CONNECTIONS_PER_KEY = ${limit}): close one or send more messages per connection.`,
    });
  }
  state.openByKey.set(checked.key.id, open + 1);
  state.keyOfSession.set(session.id, checked.key.id);
  return { key: checked.key, token };
}

function release(state: SubmissionState, session: SMTPServerSession): void {
  const keyId = state.keyOfSession.get(session.id);
  if (keyId === undefined) return;
  state.keyOfSession.delete(session.id);
  const open = (state.openByKey.get(keyId) ?? 1) - 1;
  if (open > 0) state.openByKey.set(keyId, open);
  else state.openByKey.delete(keyId);
}

function readAll(stream: SMTPServerDataStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.once('error', reject);
    stream.once('end', () => resolve(Buffer.concat(chunks)));
  });
}

/** One message through the pipeline: the 250 text, or a thrown Error carrying the SMTP reply. */
async function accept(deps: SmtpDeps, session: SMTPServerSession, raw: Buffer): Promise<string> {
  const user = userOf(session);
  // Revoking a key ends what its open connections may send, not only new sign-ins.
  const still = user ? await checkKey(deps.tenantState, user.token) : null;
  if (!user || !still || 'refusal' in still) {
    throw smtpError({
      code: 535,
      message:
        still && 'refusal' in still
          ? still.refusal
          : 'Authentication is required: AUTH PLAIN or LOGIN with an API key.',
    });
  }
  const ctx: TenantContext = apiKeyTenantContext(
    { apiKeyId: still.key.id, tenantId: still.key.tenantId, environment: still.key.environment },
    session.remoteAddress,
  );
  const envelope = {
    mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : null,
    rcptTo: session.envelope.rcptTo.map((recipient) => recipient.address),
  };
  try {
    const { send, idempotencyKey } = await parseSubmission(raw, envelope);
    const result = await acceptSends(deps, ctx, {
      sends: [send],
      shape: 'single',
      idempotencyKey,
      // With direct delivery the message may leave as the client built it, signed here, spooled by its accept.
      spoolAtAccept: (accepted) =>
        spooledSubmission({ ...deps, randomBytes: deps.mailTransports.randomBytes }, raw, ctx.tenantId, accepted),
    });
    const body = result.body as { id: string; suppressed?: string[] };
    deps.log.debug({ emailId: body.id, tenantId: ctx.tenantId, replayed: result.replayed }, 'smtp submission accepted');
    const skipped = body.suppressed?.length ? ` (not sent to suppressed ${body.suppressed.join(', ')})` : '';
    return `Ok: queued as ${body.id}${skipped}`;
  } catch (error) {
    const reply = smtpReplyOf(error);
    if (reply.code === 451) deps.log.error({ err: errorText(error), tenantId: ctx.tenantId }, 'smtp submission failed');
    throw smtpError(reply);
  }
}

/** A submission server (not listening yet): STARTTLS on a plain port, or implicit TLS. */
export function createSubmissionServer(
  deps: SmtpDeps,
  state: SubmissionState,
  options: { tls: TlsPair; implicitTls: boolean },
): SMTPServer {
  // RFC 4954 §4: no plaintext password mechanism before TLS. AUTH is not even advertised then, so a
  // well-behaved client never puts the key on the wire in the clear (smtp-server would advertise it
  // and refuse it only after the client sent it).
  const authNeedsTls = !options.implicitTls && !insecureAuthAllowed(deps.config);
  return new SMTPServer({
    secure: options.implicitTls,
    key: options.tls.key,
    cert: options.tls.cert,
    minVersion: 'TLSv1.2',
    name: deps.config.smtpSubmissionHost,
    banner: 'svc submission: AUTH with an API key as the password',
    size: SEND_BODY_LIMIT_BYTES,
    rejectOversized: true,
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: insecureAuthAllowed(deps.config),
    disabledCommands: options.implicitTls ? ['STARTTLS'] : [],
    hideENHANCEDSTATUSCODES: false,
    logger: false,
    authRequiredMessage: AUTH_REQUIRED,
    onConnect(session, callback) {
      if (authNeedsTls) session.disabledCommands = ['AUTH'];
      callback();
    },
    onSecure(_socket, session, callback) {
      session.disabledCommands = undefined;
      callback();
    },
    onAuth(auth, session, callback) {
      authenticate(deps, state, auth, session).then(
        (user) => callback(null, { user }),
        (error: Error) => callback(error),
      );
    },
    onMailFrom(_address, session, callback) {
      // With AUTH hidden before STARTTLS, smtp-server no longer demands it itself.
      callback(userOf(session) ? undefined : smtpError({ code: 530, message: AUTH_REQUIRED }));
    },
    onRcptTo(_address, session, callback) {
      if (session.envelope.rcptTo.length >= MAX_RECIPIENTS_PER_SEND) {
        return callback(
          smtpError({
            code: 452,
            message: `Too many recipients: at most ${MAX_RECIPIENTS_PER_SEND} per message; send the rest in another message.`,
          }),
        );
      }
      callback();
    },
    onData(stream, session, callback) {
      readAll(stream).then(
        (raw) => {
          // smtp-server answers 552 itself (rejectOversized); nothing of an oversized message is kept.
          if (stream.sizeExceeded) return callback(null);
          accept(deps, session, raw).then(
            (message) => callback(null, message),
            (error: Error) => callback(error),
          );
        },
        (error: Error) => callback(error),
      );
    },
    onClose(session) {
      release(state, session);
    },
  });
}
