// The inbound SMTP listener (SMTP_INBOUND_PORT; the operator maps port 25 to it): the MX of the
// return-path domain, of the service's mail domain, of the platform inbound domain and of tenants'
// inbound domains. At RCPT TO it asks one question, "who takes this address?": the service's own
// addresses first (inbound-mail/addresses.ts), then the tenants' reply addresses and routes
// (inbound-routing/route-cache.ts);
// what nobody takes is refused in the session (550, no bounce afterwards), a refuse route answers its
// 550, and a sender past its rate or a tenant past its day gets a 451 (inbound-limits.ts). The message
// is read once in the reader thread for both, then handed to inbound-mail/service.ts and stored for the
// routes (inbound-routing/receive.ts) before the 250, so a sender whose message we could not record
// (database down) gets a 451 and retries. No AUTH: this is where the Internet delivers to us.
// STARTTLS when a certificate is given.
import { SMTPServer, type SMTPServerAddress, type SMTPServerSession } from 'smtp-server';
import type { Redis } from 'ioredis';
import type { AppDeps } from '../app-types.ts';
import { SEND_BODY_LIMIT_BYTES } from '../modules/emails/validate.ts';
import { classifyRecipient, type InboundRecipient } from '../modules/inbound-mail/addresses.ts';
import {
  handleInboundMessage,
  reportsWanted,
  type InboundMailDeps,
  type InboundOutcome,
} from '../modules/inbound-mail/service.ts';
import { createInboundReader, ownedChunk, UnreadableMessageError } from '../modules/inbound-mail/reader.ts';
import { createRouteCache, type RouteCache } from '../modules/inbound-routing/route-cache.ts';
import type { RoutedRecipient } from '../modules/inbound-routing/matching.ts';
import { platformInboundDomain } from '../mail/addresses.ts';
import { createRoutedStore } from '../modules/inbound-routing/receive.ts';
import { inboundAuthservId } from '../modules/inbound-routing/forward.ts';
import { classifySrsRecipient, returnSrsBounce } from '../modules/inbound-routing/srs-bounce.ts';
import { attachmentRefusal, createInboundLimits, maxRoutedMessageBytes } from './inbound-limits.ts';

/** As large as a message the HTTP API accepts: a DSN returning one of our sends in full must fit. */
export const INBOUND_MAX_MESSAGE_BYTES = SEND_BODY_LIMIT_BYTES;
/** A report or a bounce names one address; more recipients than this is not mail for us. */
const MAX_RECIPIENTS = 20;

export interface InboundServerDeps {
  config: AppDeps['config'];
  db: Pick<AppDeps['db'], 'sequelize' | 'url' | 'embedded'>;
  secrets: Pick<AppDeps['secrets'], 'linkSigningKey' | 'encryptionKey'>;
  log: { info(details: object, message: string): void; warn(details: object, message: string): void };
  /** This node's /metrics: complaints and bounces applied (modules/inbound/service.ts). */
  metrics?: InboundMailDeps['metrics'];
  /** Where the rate limits count (every node sees the same counts); null or absent: this process. */
  redis?: Redis | null;
  redisPrefix?: string;
}

interface InboundSession extends SMTPServerSession {
  /** The service's own addresses among the recipients. */
  recipients?: InboundRecipient[];
  /** The recipients a tenant's route took. */
  routed?: RoutedRecipient[];
  /** Original senders of forwards whose bounce this is (SRS recipients, srs-bounce.ts). */
  srsBounces?: string[];
}

/** The text of the 550 for an address nobody takes (no route, no mailbox of ours). */
export function noMailboxText(address: string): string {
  return `<${address}>: this server receives only bounces, complaints, unsubscribes and DMARC reports for its own addresses, and mail its tenants route; no such mailbox here.`;
}

function smtpError(message: string, responseCode: number): Error & { responseCode: number } {
  return Object.assign(new Error(message), { responseCode });
}

export function createInboundServer(
  deps: InboundServerDeps,
  options: { tls?: { key: string | Buffer; cert: string | Buffer } } = {},
): SMTPServer {
  const { sequelize } = deps.db;
  // Messages are parsed in threads of this listener's own (started when it listens, ended with it).
  const reader = createInboundReader({ threads: deps.config.inboundReaderThreads });
  // Started at the first recipient that is not ours (it opens a LISTEN connection), closed with the server.
  let routeCache: Promise<RouteCache> | null = null;
  const routes = () =>
    (routeCache ??= createRouteCache({
      sequelize,
      platformDomain: platformInboundDomain(deps.config),
      listenUrl: deps.db.embedded ? null : deps.db.url,
      linkSigningKey: deps.secrets.linkSigningKey,
      onListenError: (error) => deps.log.warn({ err: error.message }, 'inbound routes: LISTEN connection lost'),
    }));
  const limits = createInboundLimits({ redis: deps.redis ?? null, namespace: deps.redisPrefix ?? 'svc:' });
  // Our Authentication-Results name us by the mail domain; one naming it in a message is a forgery.
  const authservId = inboundAuthservId(deps.config);
  const srsDeps = { sequelize, config: deps.config, secrets: deps.secrets };
  // Routed messages read meanwhile share a store transaction (group commit), each 250 after its commit.
  const routedStore = createRoutedStore(srsDeps);
  const server: SMTPServer = new SMTPServer({
    name: new URL(deps.config.publicUrl).hostname || undefined,
    banner: 'inbound mail for the service and its tenants',
    authOptional: true,
    disabledCommands: options.tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(options.tls ? { key: options.tls.key, cert: options.tls.cert } : {}),
    size: INBOUND_MAX_MESSAGE_BYTES,
    logger: false,
    // Nothing here uses the client's host name; a PTR lookup per connection would only add latency.
    disableReverseLookup: true,

    onMailFrom(_address, session: InboundSession, callback) {
      session.recipients = [];
      session.routed = [];
      session.srsBounces = [];
      callback();
    },

    onRcptTo(address: SMTPServerAddress, session: InboundSession, callback) {
      const recipients = (session.recipients ??= []);
      const routed = (session.routed ??= []);
      const srsBounces = (session.srsBounces ??= []);
      if (recipients.length + routed.length + srsBounces.length >= MAX_RECIPIENTS)
        return callback(smtpError('Too many recipients for this service.', 452));
      const decide = async (): Promise<Error | null> => {
        const ours = await classifyRecipient(sequelize, deps.config, deps.secrets.linkSigningKey, address.address);
        if (ours) {
          recipients.push(ours);
          return null;
        }
        const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address || null : null;
        const srs = await classifySrsRecipient(srsDeps, address.address, mailFrom);
        if (srs) {
          if ('refusal' in srs) return smtpError(srs.refusal, 550);
          srsBounces.push(srs.to);
          return null;
        }
        const taken = await (await routes()).resolve(address.address);
        if (!taken) return smtpError(noMailboxText(address.address), 550);
        if (taken.route?.action === 'refuse')
          return smtpError(taken.route.refuse_message ?? `<${address.address}>: this address accepts no mail.`, 550);
        const refusal = await limits.refusal({ mailFrom, clientIp: session.remoteAddress }, taken);
        if (refusal) return smtpError(refusal, 451);
        routed.push(taken);
        return null;
      };
      decide().then(
        (refusal) => callback(refusal ?? undefined),
        (error: Error) => {
          deps.log.warn({ err: error.message }, 'inbound RCPT lookup failed');
          callback(smtpError('Temporary failure looking up the recipient, try again later.', 451));
        },
      );
    },

    onData(stream, session: InboundSession, callback) {
      // Kept as they come, never joined here: the reader's thread joins them (no O(size) step on the loop).
      const chunks: Uint8Array[] = [];
      let bytes = 0;
      stream.on('data', (chunk: Buffer) => {
        // Past the limit the rest is read and thrown away, not kept in memory.
        bytes += chunk.length;
        if (bytes <= INBOUND_MAX_MESSAGE_BYTES) chunks.push(ownedChunk(chunk));
      });
      stream.on('end', () => {
        // smtp-server keeps reading past SIZE to finish the transaction and only flags it.
        if (bytes > INBOUND_MAX_MESSAGE_BYTES || (stream as unknown as { sizeExceeded?: boolean }).sizeExceeded) {
          return callback(
            smtpError(`Message exceeds the ${INBOUND_MAX_MESSAGE_BYTES} bytes this server accepts.`, 552),
          );
        }
        const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address || null : null;
        const recipients = session.recipients ?? [];
        const routed = session.routed ?? [];
        const srsBounces = session.srsBounces ?? [];
        // The smallest plan among the routed recipients' tenants decides for the message.
        const planLimit = Math.min(...routed.map((r) => maxRoutedMessageBytes(r.plan)));
        if (bytes > planLimit)
          return callback(smtpError(`Message exceeds the ${planLimit} bytes its recipient accepts.`, 552));
        const mailDeps = {
          sequelize,
          config: deps.config,
          secrets: deps.secrets,
          log: deps.log,
          reader,
          metrics: deps.metrics,
        };
        const receive = async (): Promise<{ reports: InboundOutcome | null; stored: number }> => {
          // Queued before the read, which takes the chunks' buffers to its thread.
          const raw = srsBounces.length > 0 ? Buffer.concat(chunks) : null;
          for (const to of srsBounces) await returnSrsBounce(mailDeps, { to, raw: raw! });
          if (recipients.length === 0 && routed.length === 0) return { reports: null, stored: 0 };
          // Read once, in the reader's thread, for our addresses and the routes together.
          const read = await reader.read(chunks, {
            ...reportsWanted(deps.config, recipients),
            routed:
              routed.length > 0
                ? {
                    authservId,
                    dnsServers: deps.config.dnsServers,
                    clientIp: session.remoteAddress,
                    heloName: session.hostNameAppearsAs,
                    mailFrom,
                  }
                : null,
          });
          // Before anything is applied or stored: a refused message is refused for all its recipients.
          const tooLarge = read.routed
            ? attachmentRefusal(
                read.routed.largestAttachmentBytes,
                routed.map((r) => r.plan),
              )
            : null;
          if (tooLarge) throw smtpError(tooLarge, 552);
          const reports =
            recipients.length > 0
              ? await handleInboundMessage(mailDeps, { mailFrom, recipients, chunks: [] }, read)
              : null;
          if (routed.length === 0 || !read.routed) return { reports, stored: 0 };
          const stored = await routedStore.store(
            { mailFrom, clientIp: session.remoteAddress, size: bytes },
            routed,
            read.routed,
          );
          // Counted once stored: a refused or failed message costs the sender nothing.
          await limits
            .count(
              { mailFrom, clientIp: session.remoteAddress },
              stored.map((s) => s.tenantId),
            )
            .catch((error: Error) => deps.log.warn({ err: error.message }, 'inbound limits: not counted'));
          return { reports, stored: stored.length };
        };
        receive().then(
          ({ reports, stored }) => {
            const outcome =
              reports ??
              (routed.length > 0 || srsBounces.length === 0
                ? { handled: 'routed', count: stored }
                : { handled: 'returned to the original sender', count: srsBounces.length });
            deps.log.info(
              { from: mailFrom, to: session.envelope.rcptTo.map((r) => r.address), ...outcome, routed: stored },
              'inbound mail received',
            );
            const routedText = reports && stored ? `, routed (${stored})` : '';
            callback(null, `Accepted: ${outcome.handled}${outcome.count ? ` (${outcome.count})` : ''}${routedText}`);
          },
          (error: Error & { responseCode?: number }) => {
            if (error.responseCode === 552) return callback(error);
            if (error instanceof UnreadableMessageError) {
              // Too slow or too large to parse: sending it again would do the same.
              deps.log.warn({ from: mailFrom, err: error.message }, 'inbound mail refused: unreadable');
              return callback(smtpError('The message could not be read.', 554));
            }
            deps.log.warn({ err: error.message }, 'inbound mail could not be recorded');
            callback(smtpError('Temporary failure recording the message, try again later.', 451));
          },
        );
      });
      stream.on('error', (error: Error) => callback(error));
    },
  });
  server.on('error', (error) => deps.log.warn({ err: error.message }, 'inbound SMTP connection error'));
  server.server.once('listening', () => reader.start());
  server.server.once('close', () => {
    void reader.close();
    void routeCache?.then((cache) => cache.close());
  });
  return server;
}

/** Starts the listener when SMTP_INBOUND_PORT is set; resolves to a stop function (a no-op when off). */
export async function startInboundServer(
  deps: InboundServerDeps,
  options: { tls?: { key: string | Buffer; cert: string | Buffer } } = {},
): Promise<{ port: number; stop(): Promise<void> } | null> {
  if (deps.config.smtpInboundPort === 0) return null;
  const server = createInboundServer(deps, options);
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(deps.config.smtpInboundPort, deps.config.smtpInboundHost, () => resolve());
  });
  const port = (server.server.address() as { port: number }).port;
  deps.log.info({ host: deps.config.smtpInboundHost, port, starttls: Boolean(options.tls) }, 'inbound SMTP listening');
  return { port, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
