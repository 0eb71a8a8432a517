// A DKIM-signed message with nothing left for nodemailer to make up (date, Message-ID, boundaries), and
// nodemailer's own build of it: for the tests that check a native step leaves the message's bytes as
// nodemailer writes them (encoded parts, the body hash, CRLF line ends).
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer';

let privateKey: KeyObject | null = null;

/** A message from a@ to b@, signed for example.test (a 1024-bit key, made once), with `fields` over it. */
export function fixedSignedMessage(fields: Mail.Options): Mail.Options {
  privateKey ??= generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey;
  return {
    from: 'a@example.test',
    to: 'b@example.test',
    subject: 'Hi',
    date: new Date(0),
    messageId: '<fixed@example.test>',
    baseBoundary: 'fixed',
    dkim: { domainName: 'example.test', keySelector: 's1', privateKey },
    ...fields,
  } as Mail.Options;
}

const windows = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });

/** The message as nodemailer builds it with CRLF line ends (what the capture transport asked of it), latin1. */
export async function builtByNodemailer(message: Mail.Options): Promise<string> {
  return ((await windows.sendMail(message)) as unknown as { message: Buffer }).message.toString('latin1');
}
