// The EHLO name without EHLO_NAME (issue 49 §2): with PUBLIC_URL on an address, the MX host saw
// `EHLO 127.0.0.1`, a bare address RFC 5321 §4.1.3 writes as a literal and large providers refuse.
// Now the MX sees the host's FQDN when it has one, else `[127.0.0.1]`; boot warns in the log.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hostname } from 'node:os';
import { addressLiteral, defaultEhloName, isFullyQualifiedName, privateAddressKind } from '../daemon/ehlo-name.ts';
import type { MxHost } from './helpers/mx-host.ts';
import { MtaFixture } from './helpers/mta-fixture.ts';
import { waitFor } from './helpers/wait.ts';

let mta: MtaFixture;
let mx: MxHost;

test.before(async () => {
  mta = await MtaFixture.start();
  mx = await mta.mxHost({}, undefined, ['x.test']);
  // No EHLO_NAME; PUBLIC_URL is http://127.0.0.1:<port> (seedSendWorld).
  await mta.seed({ EHLO_NAME: undefined });
  await mta.startDaemon();
});

test.after(async () => {
  await mta?.close();
});

test('the default EHLO name: an FQDN (of PUBLIC_URL, else of the host), else an address literal', () => {
  const host = 'vm';
  assert.is(
    defaultEhloName({ publicUrl: 'https://mail.example.com', outboundAddress: null, hostname: host }),
    'mail.example.com',
  );
  assert.is(
    defaultEhloName({ publicUrl: 'http://127.0.0.1:3000', outboundAddress: null, hostname: host }),
    '[127.0.0.1]',
  );
  assert.is(
    defaultEhloName({ publicUrl: 'http://203.0.113.7', outboundAddress: null, hostname: 'mx1.example.net' }),
    'mx1.example.net',
  );
  assert.is(
    defaultEhloName({ publicUrl: 'http://203.0.113.7', outboundAddress: null, hostname: host }),
    '[203.0.113.7]',
  );
  assert.is(
    defaultEhloName({
      publicUrl: 'http://localhost:3000',
      outboundAddress: '2001:db8::7',
      hostname: 'box.localdomain',
    }),
    '[IPv6:2001:db8::7]',
  );
  assert.is(addressLiteral('192.0.2.1'), '[192.0.2.1]');
  for (const name of ['127.0.0.1', '[127.0.0.1]', 'localhost', 'vm', 'box.localdomain', '1.2.3.4.5'])
    assert.is(isFullyQualifiedName(name), false, name);
  assert.is(isFullyQualifiedName('mta.acme.test'), true);
  assert.is(privateAddressKind('10.1.2.3'), 'private (RFC 1918)');
  assert.is(privateAddressKind('127.0.0.1'), 'loopback');
  assert.is(privateAddressKind('fd00::1'), 'unique local (ULA, RFC 4193)');
  assert.is(privateAddressKind('203.0.113.7'), null);
});

test('a direct delivery with no EHLO_NAME and PUBLIC_URL on 127.0.0.1: the MX host sees an FQDN or [127.0.0.1], never a bare address; boot warns', async () => {
  await mta.send(['a@x.test'], { subject: 'ehlo' });
  await waitFor('the MX host to receive the message', () => mx.messages.length > 0, { timeoutMs: 30_000 });
  const helo = mx.messages[0].helo;
  assert.is.not(helo, '127.0.0.1');
  // This host's name when it is fully qualified (a CI runner's may be), else the literal.
  assert.is(helo, isFullyQualifiedName(hostname()) ? hostname().toLowerCase() : '[127.0.0.1]');
  // The test DNS server has no PTR for 127.0.0.1 and no address for the name: boot says so.
  await waitFor('the boot warning about the EHLO name', () => /EHLO name|reverse DNS/.test(mta.daemon!.output()), {
    timeoutMs: 15_000,
  });
  const warning = mta
    .daemon!.output()
    .split('\n')
    .find((line) => /EHLO name|reverse DNS/.test(line))!;
  assert.match(warning, /"level":(40|"warn")/);
  assert.match(
    warning,
    isFullyQualifiedName(hostname())
      ? /does not resolve|resolves to/
      : /\[127\.0\.0\.1\]: not a fully qualified domain name/,
  );
});

test.run();
