// Text and HTML handed to nodemailer as pre-built quoted-printable parts (daemon/mail/encoded-parts.ts):
// the transfer encoding is the one nodemailer's mime-node would choose, and the message nodemailer
// builds from them, DKIM signature included, is byte for byte the one it builds from the bodies; a
// composed message built by MailTransports (which pre-builds the parts) is the one nodemailer builds.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import type Mail from 'nodemailer/lib/mailer';
import MimeNode from 'nodemailer/lib/mime-node';
import { textTransferEncoding, withEncodedTextParts } from '../daemon/mail/encoded-parts.ts';
import { composeMessage, type ComposableEmail } from '../daemon/mail/compose.ts';
import type { DkimSigningOptions } from '../daemon/mail/compose.ts';
import { MailTransports } from '../daemon/mail/transport.ts';
import { hashRelaxedBodyNatively } from '../daemon/mail/dkim-body-hash.ts';
import { builtByNodemailer as built, fixedSignedMessage } from './helpers/fixed-message.ts';

const isRaw = (part: Mail.Options['text']) => typeof part === 'object' && part !== null && 'raw' in part;

const unit = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('a', 'Z', ' ', '\t', '=', '\n', '\r\n', '.', '3', 'D', 'é', 'x'.repeat(40)) },
  { weight: 2, arbitrary: fc.constantFrom('😀', '\u0001', '\x7f', '\r', '€', 'ж') },
);
const body = fc.string({ unit, maxLength: 300 });

test('the transfer encoding mime-node chooses for a text part, for any text and textEncoding (an empty part has none)', () => {
  fc.assert(
    fc.property(
      body.filter(Boolean),
      fc.constantFrom(undefined, 'quoted-printable', 'base64'),
      (content, textEncoding) => {
        const node = new MimeNode('text/plain; charset=utf-8', { textEncoding } as never).setContent(
          content,
        ) as unknown as {
          getTransferEncoding(): string;
        };
        assert.is(textTransferEncoding(content, textEncoding), node.getTransferEncoding());
      },
    ),
    { numRuns: 5_000 },
  );
});

test('the same signed message as nodemailer builds from the bodies', async () => {
  let encodedParts = 0;
  await fc.assert(
    fc.asyncProperty(
      body,
      body,
      fc.constantFrom(undefined, 'quoted-printable' as const),
      fc.boolean(),
      async (html, text, textEncoding, attach) => {
        const message = fixedSignedMessage({
          html,
          text,
          textEncoding,
          attachments: attach ? [{ filename: 'a.txt', content: 'YQ==', encoding: 'base64' }] : [],
        });
        const encoded = withEncodedTextParts(message);
        if (isRaw(encoded.text) || isRaw(encoded.html)) encodedParts++;
        assert.is(await built(encoded), await built(message));
      },
    ),
    { numRuns: 1_000 },
  );
  assert.ok(encodedParts > 300, `only ${encodedParts} of the messages had a pre-built part`);
});

test('the same message for bodies past the encoder’s 64 KiB slices, and a text-only message left to nodemailer', async () => {
  const html = `<p>${'Long line of a report, with = signs and trailing space \n'.repeat(3_000)}</p>`;
  const text = 'Grüße aus dem Bericht, eine Zeile nach der anderen.\n'.repeat(2_000);
  const message = fixedSignedMessage({ html, text });
  const encoded = withEncodedTextParts(message);
  assert.ok(isRaw(encoded.html) && isRaw(encoded.text));
  assert.is(await built(encoded), await built(message));
  const textOnly = { ...message, html: undefined };
  assert.is(
    withEncodedTextParts(textOnly),
    textOnly,
    'one part: its headers are the message’s, nodemailer writes them',
  );
});

test('composeMessage’s message as MailTransports builds it: the bytes nodemailer builds from it', async () => {
  const email: ComposableEmail = {
    id: '00000000-0000-4000-8000-000000000001',
    tenantId: '00000000-0000-4000-8000-000000000002',
    messageId: '<compose@example.test>',
    fromAddress: 'News <news@example.test>',
    toAddresses: ['b@example.test'],
    ccAddresses: [],
    bccAddresses: [],
    replyTo: [],
    subject: 'Weekly',
    htmlBody: `<html><body>${'<p>Line of the report, <a href="https://example.test/x">a link</a>.</p>\n'.repeat(200)}</body></html>`,
    textBody: null,
    headers: {},
    tags: ['weekly'],
    attachments: [],
    trackOpens: true,
    trackClicks: true,
    metadata: { campaignId: 'c1' },
  };
  // The test key, from the helper's message.
  const dkim = fixedSignedMessage({}).dkim as DkimSigningOptions;
  const options = { publicUrl: 'https://svc.test', linkSigningKey: Buffer.alloc(32, 7), dkim, envelopeFrom: null };
  // What nodemailer would make up, the date and the boundaries, fixed.
  const message = { ...composeMessage(email, options).message, date: new Date(0), baseBoundary: 'fixed' };
  assert.ok(isRaw(withEncodedTextParts(message).html) && isRaw(withEncodedTextParts(message).text));
  // nodemailer's own build first: MailTransports installs the native body hash in this process.
  const expected = await built(message as Mail.Options);
  const transports = new MailTransports({ smtpUrl: null, smtpMaxConnections: 1, smtpMaxMessages: 1 });
  try {
    assert.is((await transports.build(message as Mail.Options)).message.toString('latin1'), expected);
  } finally {
    hashRelaxedBodyNatively().restore();
  }
});

test.run();
