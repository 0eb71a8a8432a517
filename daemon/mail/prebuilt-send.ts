// A message built into one buffer (MailTransports.build: MIME, DKIM, line ends) handed to a relay's
// pool as it is, through the transport interface nodemailer documents for transports: `send(mail,
// callback)` with `mail.data` and `mail.message` offering getEnvelope(), messageId(), getHeader() and
// createReadStream() (what nodemailer's SMTPPool reads of a message; test/prebuilt-send.test.ts). Handed over with Mailer.sendMail({ raw }) instead, the message went through
// nodemailer a second time: its plugins, a MIME node (random boundary bytes included) and a stream
// pipeline whose end aborts an AbortController, one DOMException per message: ~9 % of the send
// thread in the unsigned drain's CPU profile (issue 27 §3). The pool keeps its own behaviour:
// connections, maxMessages, a message requeued on another connection when the server closed a
// reused one before a byte was read (a new stream each time, as createReadStream gives).
import { Readable } from 'node:stream';
import type { Transporter } from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool';
import type { BuiltMessage } from './buffer-transport.ts';

/** A recipient the relay refused, as nodemailer reports it. */
export interface SmtpRecipientError {
  recipient?: string;
  responseCode?: number;
  response?: string;
}

/** What the pool answers: per recipient, and the relay's last reply. */
export interface RelayAnswer {
  accepted: (string | { address: string })[];
  rejectedErrors?: SmtpRecipientError[];
  response: string;
}

/** Sends `built` through the pool behind `transport` (a pooled nodemailer transport). */
export function sendPrebuilt(transport: Transporter, built: BuiltMessage): Promise<RelayAnswer> {
  return sendMailObject(transport, prebuiltMail(built));
}

/** The pool's side of a queued message: what SMTPPool reads of `mail`, for `built`. */
export function prebuiltMail(built: BuiltMessage) {
  return {
    data: { envelope: built.envelope, messageId: built.messageId },
    message: {
      // The pool adds its DSN and REQUIRETLS settings to the envelope it is given: a new object each time.
      getEnvelope: () => ({ from: built.envelope.from, to: [...built.envelope.to] }),
      messageId: () => built.messageId,
      // The pool names its queue entries by the Message-ID header (its logs).
      getHeader: (name: string) => (name.toLowerCase() === 'message-id' ? built.messageId : undefined),
      createReadStream: () => Readable.from([built.message], { objectMode: false }),
    },
  };
}

/** Queues `mail` (prebuiltMail's shape) on the pool behind `transport` and answers what the relay said. */
export function sendMailObject(transport: Transporter, mail: object): Promise<RelayAnswer> {
  const pool = (transport as unknown as Mail).transporter as unknown as SMTPPool;
  return new Promise((resolve, reject) => {
    pool.send(mail as Parameters<SMTPPool['send']>[0], (error, info) =>
      error ? reject(error) : resolve(info as unknown as RelayAnswer),
    );
  });
}
