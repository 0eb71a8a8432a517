// Issue 52 §2: what an application receives of a routed inbound message, read in the inbound reader's
// thread. The reply stripped of history and signature on Gmail, Outlook, Apple Mail and other shapes;
// Authentication-Results naming our authserv-id removed and ours on top; attachments with their
// hashes and bytes; and the verdicts computed with mailauth on a dkimpy-signed message whose SPF and
// DKIM records the test DNS server serves (pass, a tampered body's fail, a forged header's removal).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { stripReply } from '../daemon/modules/inbound-routing/reply-text.ts';
import { authservIdOf, withoutOurAuthResults } from '../daemon/modules/inbound-routing/verdicts.ts';
import { createInboundReader, ownedChunk, type InboundReader } from '../daemon/modules/inbound-mail/reader.ts';
import { MAX_ATTACHMENTS, parseMessage, type RoutedWanted } from '../daemon/modules/inbound-routing/parse.ts';
import { startDnsServer, type TestDnsServer } from './helpers/dns-server.ts';
import { dkimPython, dkimpySign, publishedDkimKey } from './helpers/dkim-verify.ts';

const AUTHSERV = 'mx.svc.test';
let dns: TestDnsServer;
let reader: InboundReader;
let python: string;
let senderKey: string;

test.before(async () => {
  python = dkimPython();
  dns = await startDnsServer();
  senderKey = publishedDkimKey(dns.zone, 'sender.test', 's1');
  dns.zone.txt.set('sender.test', ['v=spf1 ip4:192.0.2.10 -all']);
  dns.zone.txt.set('_dmarc.sender.test', ['v=DMARC1; p=reject']);
  reader = createInboundReader();
});
test.after(async () => {
  await reader?.close();
  await dns?.close();
});

const wanted = (routed: Partial<RoutedWanted> = {}) => ({
  report: false,
  dmarc: false,
  unsubscribeTokens: false,
  feedbackSignatures: null,
  routed: {
    authservId: AUTHSERV,
    dnsServers: [dns.address],
    clientIp: '192.0.2.10',
    heloName: 'mail.sender.test',
    mailFrom: 'alice@sender.test',
    ...routed,
  },
});
const read = (raw: string, routed: Partial<RoutedWanted> = {}) =>
  reader.read([ownedChunk(Buffer.from(raw))], wanted(routed)).then((result) => result.routed!);

// --- stripped replies ---------------------------------------------------------------------------

test('Gmail: the wrapped "On … wrote:" line and the quoted history are cut, the "-- " signature split off', () => {
  const text = [
    'Thanks, that works for me.',
    '',
    'See you Tuesday.',
    '-- ',
    'Alice Example',
    'Example Corp',
    '',
    'On Mon, 4 Mar 2024 at 10:02, Support Team of Example Shop <',
    'support@shop.example> wrote:',
    '',
    '> Can we meet on Tuesday?',
    '>',
    '> Bob',
  ].join('\n');
  assert.equal(stripReply(text), {
    strippedText: 'Thanks, that works for me.\n\nSee you Tuesday.',
    strippedSignature: 'Alice Example\nExample Corp',
  });
});

test('Outlook: the block of From/Sent/To/Subject under a line of underscores is history', () => {
  const text = [
    'Approved.',
    '',
    'Regards,',
    'Carol',
    '',
    '________________________________',
    'From: Shop <orders@shop.example>',
    'Sent: Monday, March 4, 2024 10:02 AM',
    'To: Carol <carol@corp.example>',
    'Subject: Order 1234',
    '',
    'Please approve order 1234.',
  ].join('\r\n');
  assert.equal(stripReply(text), { strippedText: 'Approved.\n\nRegards,\nCarol', strippedSignature: null });
  const original = 'Yes.\n\n-----Original Message-----\nFrom: x@y.example\nSent: today\n\nold text';
  assert.equal(stripReply(original).strippedText, 'Yes.');
  const german = 'Ja.\n\nVon: Shop <orders@shop.example>\nGesendet: Montag, 4. März 2024 10:02\nAn: c@d.example\n\nalt';
  assert.equal(stripReply(german).strippedText, 'Ja.');
});

test('Apple Mail and iPhone: "On 4 Mar 2024, at 10:02, … wrote:" and the "Sent from my iPhone" line', () => {
  const text = [
    'Sounds good!',
    '',
    'Sent from my iPhone',
    '',
    'On 4 Mar 2024, at 10:02, Shop <support@shop.example> wrote:',
    '',
    '> Your order shipped.',
  ].join('\n');
  assert.equal(stripReply(text), { strippedText: 'Sounds good!', strippedSignature: 'Sent from my iPhone' });
});

test('other languages, a trailing ">" block, and what is not history', () => {
  assert.equal(
    stripReply('Merci !\n\nLe lun. 4 mars 2024 à 10:02, Shop <s@shop.example> a écrit :\n> Bonjour').strippedText,
    'Merci !',
  );
  assert.equal(
    stripReply('Danke.\n\nAm 04.03.2024 um 10:02 schrieb Shop <s@shop.example>:\n> Hallo').strippedText,
    'Danke.',
  );
  assert.equal(
    stripReply('Gracias.\n\nEl lun, 4 mar 2024 a las 10:02, Shop (<s@shop.example>) escribió:\n> Hola').strippedText,
    'Gracias.',
  );
  assert.equal(stripReply('Ok\n\n> quoted line\n> another\n\n').strippedText, 'Ok');
  // An inline reply between quotes is kept whole: cutting at the first quote would lose the answers.
  const inline = '> Question one?\nAnswer one.\n> Question two?\nAnswer two.';
  assert.equal(stripReply(inline).strippedText, inline);
  // "wrote:" in the reply itself, naming no time or address, is not a header.
  assert.equal(stripReply('Here is what he wrote:\nsomething').strippedText, 'Here is what he wrote:\nsomething');
  assert.equal(stripReply('Just text.'), { strippedText: 'Just text.', strippedSignature: null });
});

test('HTML-only replies: the gmail_quote of Gmail and the divRplyFwdMsg of Outlook under its <hr>', async () => {
  const none = { result: 'none' } as const;
  const auth = {
    spf: { ...none, domain: null, clientIp: '192.0.2.1', explanation: null },
    dkim: { ...none, signatures: [] },
    dmarc: { ...none, domain: null, policy: null },
    arc: { ...none, instance: 0, sealer: null },
  };
  const html = (body: string) =>
    Buffer.from(`From: a@sender.test\r\nSubject: Re: hi\r\nContent-Type: text/html; charset=UTF-8\r\n\r\n${body}\r\n`);
  const gmail = await parseMessage(
    html(
      '<div dir="ltr">Sounds great, see you then!</div><br><div class="gmail_quote"><div dir="ltr" class="gmail_attr">On Mon, Mar 4, 2024 at 10:02 AM Shop &lt;<a href="mailto:s@shop.test">s@shop.test</a>&gt; wrote:<br></div><blockquote class="gmail_quote"><div>Can we meet?</div></blockquote></div>',
    ),
    auth,
  );
  assert.is(gmail.parsed.strippedText, 'Sounds great, see you then!');
  const outlook = await parseMessage(
    html(
      '<div>Approved.</div><div id="appendonsend"></div><hr style="display:inline-block;width:98%"><div id="divRplyFwdMsg" dir="ltr"><font face="Calibri, sans-serif"><b>From:</b> Shop &lt;s@shop.test&gt;<br><b>Sent:</b> Monday, March 4, 2024 10:02 AM<br><b>To:</b> a@outlook.com<br><b>Subject:</b> hi</font></div><div>Can we meet?</div>',
    ),
    auth,
  );
  assert.is(outlook.parsed.strippedText, 'Approved.');
});

test('bounded: the first MAX_ATTACHMENTS attachments are listed, the header list and values cut', async () => {
  const parts = Array.from(
    { length: MAX_ATTACHMENTS + 20 },
    (_, i) =>
      `--b\r\nContent-Type: text/plain; name="f${i}.txt"\r\nContent-Disposition: attachment\r\n\r\nfile ${i}\r\n`,
  );
  const raw = Buffer.from(
    `From: a@sender.test\r\nX-Long: ${'x'.repeat(20_000)}\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n${parts.join('')}--b--\r\n`,
  );
  const { parsed, attachments } = await parseMessage(raw, {
    spf: { result: 'none', domain: null, clientIp: '192.0.2.1', explanation: null },
    dkim: { result: 'none', signatures: [] },
    dmarc: { result: 'none', domain: null, policy: null },
    arc: { result: 'none', instance: 0, sealer: null },
  });
  assert.is(parsed.attachments.length, MAX_ATTACHMENTS);
  assert.is(parsed.attachments[0].filename, 'f0.txt');
  assert.is(attachments.length, MAX_ATTACHMENTS);
  assert.is(parsed.headers.find((h) => h.name === 'X-Long')!.value.length, 16 * 1024);
});

// --- Authentication-Results ------------------------------------------------------------------------

test('authserv-id is read past comments, quotes and case; only ours is removed, folded lines and all', () => {
  assert.is(authservIdOf(' (comment (nested)) MX.svc.test 1; spf=pass'), 'mx.svc.test');
  assert.is(authservIdOf(' "mx.svc.test"; none'), 'mx.svc.test');
  assert.is(authservIdOf('mx.svc.test;dkim=pass'), 'mx.svc.test');
  const raw = [
    'Authentication-Results: mx.svc.test;',
    '\tspf=pass smtp.mailfrom=forged.example;',
    '\tdkim=pass header.d=bank.example',
    'authentication-results : (ours) MX.SVC.TEST; dmarc=pass',
    'Authentication-Results: mx.google.com; spf=pass',
    'Subject: hi',
    '',
    'Authentication-Results: mx.svc.test; in the body, left alone',
    '',
  ].join('\r\n');
  const cleaned = withoutOurAuthResults(Buffer.from(raw), AUTHSERV);
  assert.is(cleaned.removed, 2);
  assert.is(
    cleaned.raw.toString(),
    'Authentication-Results: mx.google.com; spf=pass\r\nSubject: hi\r\n\r\nAuthentication-Results: mx.svc.test; in the body, left alone\r\n',
  );
});

// --- the whole read in the reader's thread ---------------------------------------------------------

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const PDF = Buffer.from('%PDF-1.4\n% test document\n');
function replyWithAttachments(extraHeader = ''): string {
  return [
    `${extraHeader}From: Alice <alice@sender.test>`,
    'To: Support <support@acme.test>, "Team: x" <team@acme.test>',
    'Cc: bob@sender.test',
    'Reply-To: alice+replies@sender.test',
    'Subject: =?UTF-8?Q?Re:_Caf=C3=A9_order?=',
    'Date: Mon, 04 Mar 2024 10:05:00 +0100',
    'Message-ID: <reply-1@sender.test>',
    'In-Reply-To: <orig-1@acme.test>',
    'References: <root@acme.test>\r\n <orig-1@acme.test>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Yes please.',
    '',
    'On Mon, 4 Mar 2024 at 10:00, Acme <support@acme.test> wrote:',
    '> Do you want it?',
    '--b1',
    'Content-Type: image/png; name="logo.png"',
    'Content-Disposition: inline; filename="logo.png"',
    'Content-ID: <logo@sender.test>',
    'Content-Transfer-Encoding: base64',
    '',
    PNG.toString('base64'),
    '--b1',
    'Content-Type: application/pdf; name="invoice.pdf"',
    'Content-Disposition: attachment; filename="invoice.pdf"',
    'Content-Transfer-Encoding: base64',
    '',
    PDF.toString('base64'),
    '--b1--',
    '',
  ].join('\r\n');
}
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

test('a reply with two attachments: addresses, ids, stripped text, attachments by hash with their bytes', async () => {
  const routed = await read(replyWithAttachments());
  const { parsed } = routed;
  assert.equal(parsed.from, { address: 'alice@sender.test', name: 'Alice' });
  assert.equal(
    parsed.to.map((a) => a.address),
    ['support@acme.test', 'team@acme.test'],
  );
  assert.equal(parsed.cc, [{ address: 'bob@sender.test', name: '' }]);
  assert.equal(parsed.replyTo, [{ address: 'alice+replies@sender.test', name: '' }]);
  assert.is(parsed.subject, 'Re: Café order');
  assert.is(parsed.date, '2024-03-04T09:05:00.000Z');
  assert.is(parsed.messageId, '<reply-1@sender.test>');
  assert.is(parsed.inReplyTo, '<orig-1@acme.test>');
  assert.equal(parsed.references, ['<root@acme.test>', '<orig-1@acme.test>']);
  assert.is(parsed.strippedText, 'Yes please.');
  assert.ok(parsed.text.includes('> Do you want it?'));
  assert.is(parsed.html, null);
  assert.equal(parsed.attachments, [
    {
      filename: 'logo.png',
      contentType: 'image/png',
      size: PNG.length,
      contentId: 'logo@sender.test',
      sha256: sha(PNG),
    },
    { filename: 'invoice.pdf', contentType: 'application/pdf', size: PDF.length, contentId: null, sha256: sha(PDF) },
  ]);
  const bytes = new Map(routed.attachments.map((a) => [a.sha256, Buffer.from(a.content)]));
  assert.ok(bytes.get(sha(PNG))!.equals(PNG));
  assert.ok(bytes.get(sha(PDF))!.equals(PDF));
  assert.ok(parsed.headers.some((h) => h.name === 'References' && h.value === '<root@acme.test> <orig-1@acme.test>'));
  // Unsigned, from the IP its SPF lists: SPF passes and aligns, so DMARC passes without DKIM.
  assert.is(parsed.auth.spf.result, 'pass');
  assert.is(parsed.auth.dkim.result, 'none');
  assert.is(parsed.auth.dmarc.result, 'pass');
  assert.is(parsed.auth.arc.result, 'none');
  const stored = gunzipSync(routed.rawGzip).toString();
  assert.ok(stored.startsWith('Received-SPF: pass'), stored.slice(0, 200));
  assert.match(stored, /\r\nAuthentication-Results: mx\.svc\.test;\r\n dkim=none/);
});

test('dkimpy-signed: pass with our header on top; a forged Authentication-Results naming us is gone', async () => {
  const forged = 'Authentication-Results: mx.svc.test; spf=pass; dkim=pass header.d=bank.example; dmarc=pass\r\n';
  const signed = await dkimpySign(python, replyWithAttachments(), {
    domain: 'sender.test',
    selector: 's1',
    privateKey: senderKey,
  });
  // The forged header added above the signature (a relay or the sender itself), from an IP SPF refuses.
  const routed = await read(forged + signed, { clientIp: '198.51.100.7' });
  const { auth } = routed.parsed;
  assert.is(auth.dkim.result, 'pass');
  assert.equal(
    auth.dkim.signatures.map((s) => [s.domain, s.selector, s.result, s.aligned]),
    [['sender.test', 's1', 'pass', true]],
  );
  assert.is(auth.spf.result, 'fail');
  assert.is(auth.spf.domain, 'sender.test');
  assert.is(auth.dmarc.result, 'pass');
  assert.is(auth.dmarc.policy, 'reject');
  const stored = gunzipSync(routed.rawGzip).toString();
  assert.not.ok(stored.includes('bank.example'), 'the forged verdict is not stored');
  const ours = routed.parsed.headers.filter((h) => h.name.toLowerCase() === 'authentication-results');
  assert.is(ours.length, 1);
  assert.match(ours[0].value, /^mx\.svc\.test; dkim=pass .*header\.d=sender\.test/);

  // The same signed bytes with the body changed: no DKIM pass (mailauth says `neutral` for a body hash
  // that does not match), so DMARC fails (SPF fails here too).
  const tampered = signed.replace('Yes please.', 'No thanks.');
  const broken = await read(tampered, { clientIp: '198.51.100.7' });
  assert.is(broken.parsed.auth.dkim.result, 'neutral');
  assert.match(broken.parsed.auth.dkim.signatures[0].comment ?? '', /body hash/);
  assert.is(broken.parsed.auth.dmarc.result, 'fail');
  assert.is(broken.parsed.strippedText, 'No thanks.');
});

test('a null sender is judged by its HELO name; a message with no From gets an empty one', async () => {
  dns.zone.txt.set('mail.sender.test', ['v=spf1 ip4:192.0.2.10 -all']);
  const routed = await read('To: support@acme.test\r\nSubject: bare\r\n\r\nbody\r\n', { mailFrom: null });
  assert.is(routed.parsed.auth.spf.result, 'pass');
  assert.is(routed.parsed.auth.spf.domain, 'mail.sender.test');
  assert.equal(routed.parsed.from, { address: '', name: '' });
  assert.is(routed.parsed.date, null);
  assert.is(routed.parsed.auth.dmarc.result, 'none');
});

test.run();
