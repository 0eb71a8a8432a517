// A compiled message written in one pass (daemon/mail/serialize-message.ts) is byte for byte what
// nodemailer's stream of it writes (bufferTransport against streamingBufferTransport), signed and not,
// for any bodies, headers, addresses and attachments; a message with a part that needs a stream is
// left to nodemailer and still built.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { generateKeyPairSync } from 'node:crypto';
import { Readable } from 'node:stream';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer';
import type MailMessage from 'nodemailer/lib/mailer/mail-message';
import { bufferTransport, streamingBufferTransport, type BuiltMessage } from '../daemon/mail/buffer-transport.ts';
import { serializeMessage } from '../daemon/mail/serialize-message.ts';
import { withEncodedTextParts } from '../daemon/mail/encoded-parts.ts';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';

const oneKey = generateKeyPairSync('rsa', { modulusLength: 1024 });
const otherKey = generateKeyPairSync('rsa', { modulusLength: 1024 });
const inOnePass = nodemailer.createTransport(bufferTransport);
const streamed = nodemailer.createTransport(streamingBufferTransport);

/** Messages the serializer wrote (not null) and left to nodemailer, counted by a transport of its own. */
const written = { inOnePass: 0, left: 0 };
const counting = nodemailer.createTransport({
  name: 'counting',
  version: '1',
  send(mail: MailMessage<BuiltMessage>, done: (error: Error | null, info?: BuiltMessage) => void) {
    mail.message.keepBcc = false;
    if (serializeMessage(mail)) written.inOnePass++;
    else written.left++;
    done(null, { envelope: { from: false, to: [] }, messageId: '', message: Buffer.alloc(0) });
  },
});

const built = async (transport: typeof inOnePass, message: Mail.Options) =>
  ((await transport.sendMail({ ...message })) as unknown as BuiltMessage).message.toString('latin1');

const unit = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('a', 'Z', ' ', '\t', '=', '\n', '\r\n', '.', 'x'.repeat(40)) },
  { weight: 2, arbitrary: fc.constantFrom('é', '😀', '\u0001', '\x7f', '\r', '€', 'ж', ' \n') },
);
const text = fc.string({ unit, maxLength: 300 });
const headerText = fc.string({ unit: fc.constantFrom('a', ' ', 'ü', 'Q', '"', ',', 'x'.repeat(30)), maxLength: 90 });
const attachment = fc.constantFrom<Mail.Attachment[]>(
  [],
  [{ filename: 'a.txt', content: 'YWJj', encoding: 'base64' }],
  [{ filename: 'report.pdf', content: Buffer.alloc(300, 7), contentType: 'application/pdf' }],
  [{ filename: 'notes.txt', content: 'plain notes\nline two', contentType: 'text/plain' }],
);

function message(fields: {
  html: string;
  text: string;
  subject: string;
  name: string;
  header: string;
  attachments: Mail.Attachment[];
  signed: 0 | 1 | 2;
  encoded: boolean;
  textEncoding?: 'quoted-printable' | 'base64';
}): Mail.Options {
  const base: Mail.Options = {
    from: { name: fields.name, address: 'a@example.test' },
    to: ['b@example.test', `"${fields.name}" <c@example.test>`],
    cc: fields.name ? 'd@example.test' : undefined,
    bcc: 'hidden@example.test',
    replyTo: 'reply@example.test',
    subject: fields.subject,
    html: fields.html || undefined,
    text: fields.text || undefined,
    textEncoding: fields.textEncoding,
    headers: { 'X-Custom': fields.header, 'List-Unsubscribe': `<https://example.test/u/${'t'.repeat(120)}>` },
    attachments: fields.attachments.map((a) => ({ ...a })),
    date: new Date(0),
    messageId: '<fixed@example.test>',
    baseBoundary: 'fixed',
  };
  if (fields.signed) {
    base.dkim =
      fields.signed === 1
        ? {
            domainName: 'example.test',
            keySelector: 's1',
            privateKey: oneKey.privateKey,
            headerFieldNames: 'From:To:Subject:List-Unsubscribe',
          }
        : {
            keys: [
              { domainName: 'example.test', keySelector: 's1', privateKey: oneKey.privateKey },
              { domainName: 'other.test', keySelector: 's2', privateKey: otherKey.privateKey },
            ],
          };
  }
  return fields.encoded ? withEncodedTextParts(base) : base;
}

test('byte for byte what nodemailer streams, for any bodies, headers, attachments and signatures', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.record({
        html: text,
        text,
        subject: headerText,
        name: headerText,
        header: headerText,
        attachments: attachment,
        signed: fc.constantFrom(0 as const, 1 as const, 2 as const),
        encoded: fc.boolean(),
        textEncoding: fc.constantFrom(undefined, 'quoted-printable' as const, 'base64' as const),
      }),
      async (fields) => {
        const options = message(fields);
        assert.is(await built(inOnePass, options), await built(streamed, options));
        await counting.sendMail({ ...options });
      },
    ),
    { numRuns: 1_500 },
  );
  assert.ok(written.inOnePass > 1_400, `written in one pass: ${written.inOnePass}, left: ${written.left}`);
});

test('the signatures verify (mailauth), one per key, and a key that cannot sign leaves the message unsigned as nodemailer does', async () => {
  const fields = { html: '<p>Hi  there</p>\n', text: 'Hi  there \n\n', subject: 'Grüße', name: 'Zoë', header: 'x' };
  const signedTwice = await built(inOnePass, message({ ...fields, attachments: [], signed: 2, encoded: true }));
  assert.is((signedTwice.match(/^DKIM-Signature:/gm) ?? []).length, 2);
  const keys: Record<string, string> = {
    's1._domainkey.example.test': oneKey.publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
    's2._domainkey.other.test': otherKey.publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
  };
  const verified = await dkimVerify(Buffer.from(signedTwice, 'latin1'), {
    resolver: async (name: string) => [[`v=DKIM1; k=rsa; p=${keys[name]}`]],
  });
  assert.equal(
    verified.results.map((result: { status: { result: string } }) => result.status.result),
    ['pass', 'pass'],
  );
  const unusable = {
    ...message({ ...fields, attachments: [], signed: 0, encoded: false }),
    dkim: { domainName: 'example.test', keySelector: 's1', privateKey: 'not a key' },
  };
  const unsigned = await built(inOnePass, unusable);
  assert.is(unsigned, await built(streamed, unusable));
  assert.not.match(unsigned, /DKIM-Signature/);
});

test('a part that needs a stream (a Readable, a file path) is left to nodemailer, and the message is the same', async () => {
  const before = written.left;
  const withStream = (): Mail.Options => ({
    ...message({
      html: '<p>x</p>',
      text: 'x',
      subject: 's',
      name: 'n',
      header: 'h',
      attachments: [],
      signed: 1,
      encoded: true,
    }),
    attachments: [{ filename: 'stream.txt', content: Readable.from([Buffer.from('streamed content\n')]) }],
  });
  await counting.sendMail(withStream());
  assert.is(written.left, before + 1);
  assert.is(await built(inOnePass, withStream()), await built(streamed, withStream()));
  const withPath: Mail.Options = {
    ...message({
      html: '',
      text: 'x',
      subject: 's',
      name: '',
      header: 'h',
      attachments: [],
      signed: 0,
      encoded: false,
    }),
    attachments: [{ filename: 'package.json', path: new URL('../package.json', import.meta.url).pathname }],
  };
  await counting.sendMail({ ...withPath });
  assert.is(written.left, before + 2);
  assert.is(await built(inOnePass, withPath), await built(streamed, withPath));
});

test.run();
