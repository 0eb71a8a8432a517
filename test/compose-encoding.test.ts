// compose.ts tells nodemailer the text encoding when the answer is certain (choosesQuotedPrintable),
// so nodemailer skips its per-character count over each body. The message must be the same bytes
// either way, and nothing is said where nodemailer would choose otherwise.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer';
import { choosesQuotedPrintable } from '../daemon/mail/compose.ts';

const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });

async function raw(message: Mail.Options): Promise<string> {
  const fixed = { ...message, date: new Date(0), messageId: '<fixed@example.test>', baseBoundary: 'fixed' };
  const info = (await transport.sendMail(fixed)) as unknown as { message: Buffer };
  // Boundaries carry a random part: the rest must match byte for byte.
  return info.message.toString('latin1').replace(/--_NmP-[0-9a-f]+-Part_\d+/g, 'BOUNDARY');
}

const text = fc.string({
  unit: fc.constantFrom('a', 'Z', ' ', '=', '.', '\t', '\n', '1', '<', 'é', '😀', '\u0001'),
  maxLength: 300,
});

test('the same message with the encoding said as nodemailer would choose it', async () => {
  await fc.assert(
    fc.asyncProperty(text, text, text, async (html, plain, subject) => {
      const message: Mail.Options = { from: 'a@example.test', to: 'b@example.test', subject, html, text: plain };
      if (!choosesQuotedPrintable(message)) return;
      assert.is(await raw({ ...message, textEncoding: 'quoted-printable' }), await raw(message));
    }),
    { numRuns: 400 },
  );
});

test('said only for printable ASCII with letters in every body and nothing to encode in the headers', () => {
  const base: Mail.Options = { from: 'a@example.test', to: 'b@example.test', subject: 'Hi', html: '<p>Hello</p>' };
  assert.ok(choosesQuotedPrintable(base));
  assert.not.ok(choosesQuotedPrintable({ ...base, html: '<p>Grüße</p>' }));
  assert.not.ok(choosesQuotedPrintable({ ...base, html: '12345 678' }), 'no letters: nodemailer picks base64');
  assert.not.ok(choosesQuotedPrintable({ ...base, subject: 'Grüße' }));
  assert.not.ok(choosesQuotedPrintable({ ...base, headers: { 'X-Note': 'Grüße' } }));
  assert.not.ok(choosesQuotedPrintable({ ...base, attachments: [{ filename: 'café.txt', content: 'x' }] }));
});

test.run();
