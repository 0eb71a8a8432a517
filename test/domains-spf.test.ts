// Unit tests of the pieces under domain checks: SPF parsing, merging and CIDR matching, and names.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mergeSpf, parseSpf, termAuthorises } from '../daemon/modules/domains/spf.ts';
import { domainAndParents, normalizeDomainName, senderDomainOf } from '../daemon/mail/domain-names.ts';
import { defaultSpfMechanism } from '../daemon/modules/domains/sending-settings.ts';
import { ValidationError } from '../daemon/errors.ts';

test('parseSpf reads qualifiers, names and values', () => {
  const terms = parseSpf(
    'v=spf1 +a/24 mx:mail.example.com ip4:192.0.2.0/24 -include:x.test redirect=_spf.example.com ?all',
  );
  assert.equal(
    terms.map((t) => [t.qualifier, t.name, t.value]),
    [
      ['+', 'a', ''],
      ['+', 'mx', 'mail.example.com'],
      ['+', 'ip4', '192.0.2.0/24'],
      ['-', 'include', 'x.test'],
      ['+', 'redirect', '_spf.example.com'],
      ['?', 'all', ''],
    ],
  );
});

test('termAuthorises: includes by name, ip4 by CIDR, never with a fail qualifier', () => {
  const [include, range, narrow, failing] = parseSpf(
    'v=spf1 include:_SPF.Svc.Test. ip4:192.0.2.0/24 ip4:192.0.2.128/25 -ip4:192.0.2.7',
  );
  assert.ok(termAuthorises(include, 'include:_spf.svc.test'));
  assert.ok(termAuthorises(range, 'ip4:192.0.2.7'));
  assert.not.ok(termAuthorises(narrow, 'ip4:192.0.2.7'));
  assert.not.ok(termAuthorises(failing, 'ip4:192.0.2.7'));
});

test('mergeSpf keeps existing terms and the strict all, adds ours once', () => {
  assert.is(mergeSpf(['v=spf1 include:a.test -all'], 'include:us.test'), 'v=spf1 include:a.test include:us.test -all');
  assert.is(mergeSpf(['v=spf1 include:us.test +all'], 'include:us.test'), 'v=spf1 include:us.test ~all');
  assert.is(
    mergeSpf(['v=spf1 mx ~all', 'v=spf1 mx include:b.test ~all'], 'ip4:192.0.2.1'),
    'v=spf1 mx include:b.test ip4:192.0.2.1 ~all',
  );
  assert.is(
    mergeSpf(['v=spf1 redirect=_spf.a.test'], 'include:us.test'),
    'v=spf1 include:us.test redirect=_spf.a.test',
  );
});

test('normalizeDomainName', () => {
  assert.is(normalizeDomainName(' Mail.Example.COM. '), 'mail.example.com');
  assert.is(normalizeDomainName('münchen.de'), 'xn--mnchen-3ya.de');
  for (const bad of ['10.0.0.1', '::1', 'com', 'a_b.test', 'x'.repeat(64) + '.test', 'mail@x.test']) {
    assert.throws(
      () => normalizeDomainName(bad),
      (error: unknown) => error instanceof ValidationError,
      bad,
    );
  }
});

test('sender domains and parents', () => {
  assert.is(senderDomainOf('Team <News@Sub.Example.com>'), 'sub.example.com');
  assert.is(senderDomainOf('nobody'), null);
  assert.equal(domainAndParents('a.b.example.com'), ['a.b.example.com', 'b.example.com', 'example.com']);
});

test('default SPF mechanism follows PUBLIC_URL', () => {
  assert.is(defaultSpfMechanism({ publicUrl: 'http://127.0.0.1:3000' }), 'ip4:127.0.0.1');
  assert.is(defaultSpfMechanism({ publicUrl: 'http://[2001:db8::1]:3000' }), 'ip6:2001:db8::1');
  assert.is(defaultSpfMechanism({ publicUrl: 'https://Mail.Svc.Example' }), 'include:_spf.mail.svc.example');
});

test.run();
