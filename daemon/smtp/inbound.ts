// The inbound SMTP listener (SMTP_INBOUND_PORT; the operator maps port 25 to it): the MX of the
// return-path domain and of the service's mail domain. It takes mail only for the service's own
// addresses (inbound-mail/addresses.ts) and hands each message to inbound-mail/service.ts before it
// answers 250, so a sender whose message we could not record (database down) gets a 451 and retries.
// No AUTH: this is where the Internet delivers to us. STARTTLS when a certificate is given.
import { SMTPServer, type SMTPServerAddress, type SMTPServerSession } from 'smtp-server';
import type { AppDeps } from '../app-types.ts';
import { SEND_BODY_LIMIT_BYTES } from '../modules/emails/validate.ts';
import { classifyRecipient, type InboundRecipient } from '../modules/inbound-mail/addresses.ts';
import { handleInboundMessage, type InboundMailDeps } from '../modules/inbound-mail/service.ts';
import { createInboundReader, ownedChunk, UnreadableMessageError } from '../modules/inbound-mail/reader.ts';

/** As large as a message the HTTP API accepts: a DSN returning one of our sends in full must fit. */
export const INBOUND_MAX_MESSAGE_BYTES = SEND_BODY_LIMIT_BYTES;
/** A report or a bounce names one address; more recipients than this is not mail for us. */
const MAX_RECIPIENTS = 20;

export interface InboundServerDeps {
  config: AppDeps['config'];
  db: Pick<AppDeps['db'], 'sequelize'>;
  secrets: Pick<AppDeps['secrets'], 'linkSigningKey' | 'encryptionKey'>;
  log: { info(details: object, message: string): void; warn(details: object, message: string): void };
  /** This node's /metrics: complaints and bounces applied (modules/inbound/service.ts). */
  metrics?: InboundMailDeps['metrics'];
}

interface InboundSession extends SMTPServerSession {
  recipients?: InboundRecipient[];
}

function smtpError(message: string, responseCode: number): Error & { responseCode: number } {
  return Object.assign(new Error(message), { responseCode });
}

export function createInboundServer(
  deps: InboundServerDeps,
  options: { tls?: { key: string | Buffer; cert: string | Buffer } } = {},
): SMTPServer {
  const { sequelize } = deps.db;
  // Messages are parsed in a thread of this listener's own (started at the first message, ended with it).
  const reader = createInboundReader();
  const server: SMTPServer = new SMTPServer({
    name: new URL(deps.config.publicUrl).hostname || undefined,
    banner: 'inbound mail for bounces, complaints, unsubscribes and DMARC reports',
    authOptional: true,
    disabledCommands: options.tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(options.tls ? { key: options.tls.key, cert: options.tls.cert } : {}),
    size: INBOUND_MAX_MESSAGE_BYTES,
    logger: false,
    // Nothing here uses the client's host name; a PTR lookup per connection would only add latency.
    disableReverseLookup: true,

    onMailFrom(_address, session: InboundSession, callback) {
      session.recipients = [];
      callback();
    },

    onRcptTo(address: SMTPServerAddress, session: InboundSession, callback) {
      const recipients = (session.recipients ??= []);
      if (recipients.length >= MAX_RECIPIENTS) return callback(smtpError('Too many recipients for this service.', 452));
      classifyRecipient(sequelize, deps.config, deps.secrets.linkSigningKey, address.address).then(
        (recipient) => {
          if (!recipient) {
            return callback(
              smtpError(
                `<${address.address}>: this server receives only bounces, complaints, unsubscribes and DMARC reports for its own addresses; no such mailbox here.`,
                550,
              ),
            );
          }
          recipients.push(recipient);
          callback();
        },
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
        handleInboundMessage(
          { sequelize, config: deps.config, secrets: deps.secrets, log: deps.log, reader, metrics: deps.metrics },
          { mailFrom, recipients: session.recipients ?? [], chunks },
        ).then(
          (outcome) => {
            deps.log.info(
              { from: mailFrom, to: session.envelope.rcptTo.map((r) => r.address), ...outcome },
              'inbound mail received',
            );
            callback(null, `Accepted: ${outcome.handled}${outcome.count ? ` (${outcome.count})` : ''}`);
          },
          (error: Error) => {
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
  server.server.once('close', () => void reader.close());
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
