// A built message handed straight to a relay's pool (mail/prebuilt-send.ts): the relay receives the
// built bytes exactly, per-recipient refusals come back as before, one pooled connection carries
// several messages, and nodemailer's SMTPPool reads nothing of the mail object beyond what
// prebuiltMail offers (a nodemailer upgrade that reads more fails here, not in production).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MailTransports } from '../daemon/mail/transport.ts';
import { prebuiltMail, sendMailObject, sendPrebuilt } from '../daemon/mail/prebuilt-send.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp-sink.ts';

let sink: SmtpSink;
let transports: MailTransports;

test.before(async () => {
  sink = await startSmtpSink({ parse: false });
  transports = new MailTransports({
    smtpUrl: `smtp://127.0.0.1:${sink.port}`,
    smtpMaxConnections: 1,
    smtpMaxMessages: 100,
  });
});
test.after(async () => {
  transports.close();
  await sink.close();
});

const owner = { sql: null as never, tenantId: null, emailId: null };
const message = (n: number) => ({
  from: 'News <news@acme.test>',
  to: [`reader${n}@example.test`, `second${n}@example.test`],
  subject: `Issue ${n}`,
  // A line that starts with a dot: the relay must get it back unescaped, the bytes as built.
  text: `Hello ${n}\n.a line with a leading dot\nand the end.`,
  html: `<p>Hello ${n}</p>`,
  messageId: `<prebuilt-${n}@acme.test>`,
});

test('the relay receives the built message byte for byte, several over one pooled connection', async () => {
  sink.messages.length = 0;
  const relay = transports.relayTransport({ host: '127.0.0.1', port: sink.port, secure: false });
  const built = await Promise.all([1, 2, 3].map((n) => transports.build(message(n))));
  const answers = await Promise.all(built.map((one) => sendPrebuilt(relay, one)));
  assert.ok(
    answers.every((answer) => /^250/.test(answer.response)),
    answers[0].response,
  );
  assert.is(sink.messages.length, 3);
  for (const one of built) {
    const received = sink.messages.find((m) => m.raw.includes(`Message-ID: ${one.messageId}`));
    assert.ok(received, one.messageId);
    assert.is(received.raw, one.message.toString());
    assert.equal([...received.rcptTo].sort(), [...one.envelope.to].sort());
    assert.match(received.raw, /\r\n\.a line with a leading dot\r\n/);
  }
  // deliver() takes the same way: the answer names the message and the relay's reply.
  const delivered = await transports.deliver(transports.defaultRelay(), message(9), owner);
  assert.is(delivered.messageId, '<prebuilt-9@acme.test>');
  assert.match(delivered.response, /^250/);
  assert.equal(delivered.accepted, ['reader9@example.test', 'second9@example.test']);
  assert.is(sink.messages.length, 4);
});

test('a recipient the relay refuses is reported with its reply; the others are accepted', async () => {
  sink.messages.length = 0;
  sink.behaviour.onRcpt = (address) =>
    address.startsWith('second') ? { code: 550, message: '5.1.1 no such user' } : null;
  try {
    const result = await transports.deliver(transports.defaultRelay(), message(4), owner);
    assert.equal(result.accepted, ['reader4@example.test']);
    assert.is(result.rejected.length, 1);
    assert.is(result.rejected[0].address, 'second4@example.test');
    assert.is(result.rejected[0].responseCode, 550);
    assert.match(result.rejected[0].response, /no such user/);
  } finally {
    sink.behaviour.onRcpt = undefined;
  }
});

test('SMTPPool reads only what prebuiltMail offers', async () => {
  const built = await transports.build(message(5));
  const read = { mail: new Set<string>(), data: new Set<string>(), message: new Set<string>() };
  const watched = <T extends object>(target: T, seen: Set<string>): T =>
    new Proxy(target, {
      get(object, key, receiver) {
        if (typeof key === 'string') seen.add(key);
        return Reflect.get(object, key, receiver);
      },
    });
  const mail = prebuiltMail(built);
  const answer = await sendMailObject(
    transports.relayTransport({ host: '127.0.0.1', port: sink.port, secure: false }),
    watched({ data: watched(mail.data, read.data), message: watched(mail.message, read.message) }, read.mail),
  );
  assert.match(answer.response, /^250/);
  const offered = (object: object) => new Set(Object.keys(object));
  for (const key of read.mail) assert.ok(['data', 'message'].includes(key), `mail.${key}`);
  for (const key of read.message) assert.ok(offered(mail.message).has(key), `mail.message.${key} is read`);
  // Options of sendMail the pool honours when set; none of them is set for a prebuilt message.
  for (const key of read.data)
    assert.ok(
      offered(mail.data).has(key) || ['dsn', 'requireTLSExtensionEnabled', 'signal'].includes(key),
      `mail.data.${key} is read`,
    );
});

test.run();
