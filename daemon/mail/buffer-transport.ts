// Builds a message into one buffer through nodemailer's whole pipeline (MIME, DKIM): a transport of
// nodemailer's documented kind (an object with `send`), because its own stream transport keeps the
// Bcc header in what it builds (it is meant for a copy in a local mailbox). What this builds goes to
// relays and recipients' MX hosts, and is captured as a relay would receive it, so Bcc recipients are
// in the envelope only, as nodemailer's SMTP transports send them.
import type { Transport } from 'nodemailer';
import type MailMessage from 'nodemailer/lib/mailer/mail-message';

/** A message built whole: what capture stores, the spool holds and a relay is handed (mail/transport.ts). */
export interface BuiltMessage {
  envelope: { from: string | false; to: string[] };
  messageId: string;
  message: Buffer;
}

export const bufferTransport: Transport<BuiltMessage> = {
  name: 'svc-buffer',
  version: '1',
  send(mail: MailMessage<BuiltMessage>, done: (error: Error | null, info?: BuiltMessage) => void): void {
    mail.message.keepBcc = false;
    const envelope = mail.message.getEnvelope() as BuiltMessage['envelope'];
    const messageId = mail.message.messageId();
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
  },
};
