// Issue 52 §5: mailauth's DKIM key parse is kept between messages (inbound-mail/mailauth-load.ts), per
// record text. A key rotated or revoked in DNS must count as soon as the resolver sees the new record
// (its answers are kept DNS_CACHE_MS, 5 s): the same signed bytes then fail, and a message signed with
// the new key passes. Read through the real reader thread, keys served by the test DNS server.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import nodemailer from 'nodemailer';
import { createInboundReader, ownedChunk, type InboundReader } from '../daemon/modules/inbound-mail/reader.ts';
import { startDnsServer, type TestDnsServer } from './helpers/dns-server.ts';
import { routedReadWanted } from './helpers/reader-wanted.ts';
import { publishedDkimKey } from './helpers/dkim-verify.ts';

const DOMAIN = 'rotating.test';
let dns: TestDnsServer;
let reader: InboundReader;

test.before(async () => {
  dns = await startDnsServer();
  dns.zone.txt.set(DOMAIN, ['v=spf1 ip4:192.0.2.10 -all']);
  reader = createInboundReader();
});
test.after(async () => {
  await reader?.close();
  await dns?.close();
});

async function signed(privateKey: string, subject: string): Promise<Buffer> {
  const build = nodemailer.createTransport({ streamTransport: true, buffer: true });
  const info = await build.sendMail({
    from: `ann@${DOMAIN}`,
    to: 'support@acme.test',
    subject,
    text: 'Hello',
    dkim: { domainName: DOMAIN, keySelector: 's1', privateKey },
  });
  return info.message as Buffer;
}

async function dkimOf(raw: Buffer) {
  const read = await reader.read(
    [ownedChunk(raw)],
    routedReadWanted(dns.address, { heloName: 'mx.rotating.test', mailFrom: `ann@${DOMAIN}` }),
  );
  return read.routed!.parsed.auth.dkim;
}

const pastDnsCache = () => new Promise((resolve) => setTimeout(resolve, 5_500));

test('a DKIM key kept between messages: rotation and revocation count once DNS says so', async () => {
  const first = publishedDkimKey(dns.zone, DOMAIN, 's1');
  const old = await signed(first, 'one');
  assert.is((await dkimOf(old)).result, 'pass');
  assert.is((await dkimOf(await signed(first, 'two'))).result, 'pass', 'the kept key verifies the next message');

  const second = publishedDkimKey(dns.zone, DOMAIN, 's1');
  await pastDnsCache();
  const stale = await dkimOf(old);
  assert.is(stale.result, 'fail', 'the old key is not used once the record changed');
  assert.is(stale.signatures[0].comment, 'bad signature');
  assert.is((await dkimOf(await signed(second, 'three'))).result, 'pass');

  // Revoked (an empty p=): refused by mailauth, never kept as a key.
  dns.zone.txt.set(`s1._domainkey.${DOMAIN}`, ['v=DKIM1; k=rsa; p=']);
  await pastDnsCache();
  const revoked = await dkimOf(await signed(second, 'four'));
  assert.is.not(revoked.result, 'pass');
});

test.run();
