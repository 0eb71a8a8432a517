// MimeNode's header names remembered (daemon/mail/header-keys.ts): the same answer as nodemailer's own
// _normalizeHeaderKey for any name, remembered or not, and a message built with it is the same.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import MimeNode from 'nodemailer/lib/mime-node';
import { rememberHeaderKeys } from '../daemon/mail/header-keys.ts';
import { builtByNodemailer, fixedSignedMessage } from './helpers/fixed-message.ts';

type Normalize = (key: unknown) => string;
const normalize = (key: unknown) =>
  (MimeNode.prototype as unknown as { _normalizeHeaderKey: Normalize })._normalizeHeaderKey.call(null, key);

const name = fc.string({
  unit: fc.constantFrom(
    'a',
    'X',
    '-',
    'mime',
    'DKIM',
    'id',
    'spf',
    'smtpapi',
    ':',
    ' ',
    '\u0000',
    'é',
    'Content-Features',
  ),
  maxLength: 12,
});

test('the same normalised name as nodemailer for any name, first asked or remembered; not installed twice', () => {
  const names = fc.sample(name, 3_000);
  const expected = names.map(normalize);
  const installed = rememberHeaderKeys();
  try {
    assert.is(rememberHeaderKeys(), installed);
    for (let round = 0; round < 2; round++) assert.equal(names.map(normalize), expected);
    assert.is(normalize(undefined), '');
    assert.is(normalize(42), '42');
  } finally {
    installed.restore();
  }
  assert.equal(names.map(normalize), expected);
});

test('a message built with it is byte for byte the one built without', async () => {
  const message = () =>
    fixedSignedMessage({
      html: '<p>Hi</p>',
      text: 'Hi',
      headers: { 'x-custom-id': '1', 'X-SMTPAPI': '{}', 'list-unsubscribe': '<https://example.test/u>' },
    });
  const without = await builtByNodemailer(message());
  const installed = rememberHeaderKeys();
  try {
    assert.is(await builtByNodemailer(message()), without);
  } finally {
    installed.restore();
  }
});

test.run();
