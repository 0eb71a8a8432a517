// Builds a message into one buffer with nodemailer's compile (MIME, DKIM), written in one pass where it can
// be (serialize-message.ts), else read from nodemailer's stream of it: a transport of
// nodemailer's documented kind (an object with `send`), because its own stream transport keeps the
// Bcc header in what it builds (it is meant for a copy in a local mailbox). What this builds goes to
// relays and recipients' MX hosts, and is captured as a relay would receive it, so Bcc recipients are
// in the envelope only, as nodemailer's SMTP transports send them.
import type { Transport } from 'nodemailer';
import type MailMessage from 'nodemailer/lib/mailer/mail-message';
import { serializeMessage } from './serialize-message.ts';

/** A message built whole: what capture stores, the spool holds and a relay is handed (mail/transport.ts). */
export interface BuiltMessage {
  envelope: { from: string | false; to: string[] };
  messageId: string;
  message: Buffer;
}

type Done = (error: Error | null, info?: BuiltMessage) => void;

/** The message read from nodemailer's stream of it (createReadStream: its MIME tree, then its signer). */
function streamMessage(mail: MailMessage<BuiltMessage>, done: Done): void {
  const { envelope, messageId } = addressing(mail);
  let stream;
  try {
    stream = mail.message.createReadStream();
  } catch (error) {
    done(error as Error);
    return;
  }
  const chunks: Buffer[] = [];
  let length = 0;
  stream.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    length += chunk.length;
  });
  stream.once('error', (error: Error) => done(error));
  stream.once('end', () => done(null, { envelope, messageId, message: Buffer.concat(chunks, length) }));
}

/** The envelope and Message-ID, read before the message is written (as nodemailer's transports do). */
function addressing(mail: MailMessage<BuiltMessage>): Omit<BuiltMessage, 'message'> {
  return { envelope: mail.message.getEnvelope() as BuiltMessage['envelope'], messageId: mail.message.messageId() };
}

/**
 * Builds the message in one pass where it can (serialize-message.ts: the same bytes, without the
 * streams), else reads nodemailer's stream of it.
 */
export const bufferTransport: Transport<BuiltMessage> = {
  name: 'svc-buffer',
  version: '1',
  send(mail: MailMessage<BuiltMessage>, done: Done): void {
    mail.message.keepBcc = false;
    const { envelope, messageId } = addressing(mail);
    let message: Buffer | null;
    try {
      message = serializeMessage(mail);
    } catch (error) {
      done(error as Error);
      return;
    }
    if (!message) return streamMessage(mail, done);
    done(null, { envelope, messageId, message });
  },
};

/** The same transport always reading nodemailer's stream: what serializeMessage is compared with (test/serialize-message.test.ts). */
export const streamingBufferTransport: Transport<BuiltMessage> = {
  name: 'svc-buffer-streaming',
  version: '1',
  send(mail: MailMessage<BuiltMessage>, done: Done): void {
    mail.message.keepBcc = false;
    streamMessage(mail, done);
  },
};
