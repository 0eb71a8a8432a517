// The provider match that shaping, warm-up and reactions key on (daemon/mta/providers.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_PROVIDERS, providerOf, patternMatches } from '../daemon/mta/providers.ts';

test('Gmail and a Workspace domain share the google provider', () => {
  assert.is(
    providerOf(['gmail-smtp-in.l.google.com', 'alt1.gmail-smtp-in.l.google.com'], DEFAULT_PROVIDERS).key,
    'google',
  );
  assert.is(providerOf(['aspmx.l.google.com'], DEFAULT_PROVIDERS).key, 'google');
  assert.is(providerOf(['smtp.google.com'], DEFAULT_PROVIDERS).key, 'google');
});

test('Yahoo, Microsoft and Apple by their MX names; anything else is default', () => {
  assert.is(providerOf(['mta5.am0.yahoodns.net'], DEFAULT_PROVIDERS).key, 'yahoo');
  assert.is(providerOf(['example-com.mail.protection.outlook.com'], DEFAULT_PROVIDERS).key, 'microsoft');
  assert.is(providerOf(['hotmail-com.olc.protection.outlook.com'], DEFAULT_PROVIDERS).key, 'microsoft');
  assert.is(providerOf(['mx01.mail.icloud.com'], DEFAULT_PROVIDERS).key, 'apple');
  assert.is(providerOf(['mx.example.org'], DEFAULT_PROVIDERS).key, 'default');
});

test('the first MX host a pattern matches decides; a wildcard needs a dot before the suffix', () => {
  assert.is(providerOf(['mx.example.org', 'aspmx.l.google.com'], DEFAULT_PROVIDERS).key, 'google');
  assert.not.ok(patternMatches('*.google.com', 'evilgoogle.com'));
  assert.ok(patternMatches('*.google.com', 'ASPMX.L.Google.com.'));
});

test.run();
