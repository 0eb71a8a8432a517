// A Bcc recipient is in the envelope only, never in the message's header, on every path a built
// message takes: relay, the direct-delivery spool and capture (MailTransports.build). nodemailer's
// stream transport, which built these messages before, keeps the Bcc header (it is meant for a local
// copy): relayed and spooled mail carried it to every recipient.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MailTransports } from '../daemon/mail/transport.ts';
import { startSmtpSink } from './helpers/smtp-sink.ts';

const message = {
  from: 'News <news@acme.test>',
  to: ['ann@example.test'],
  cc: ['carl@example.test'],
  bcc: ['hidden@example.test', 'Also Hidden <also@example.test>'],
  subject: 'Quarterly numbers',
  text: 'The numbers are in.',
  html: '<p>The numbers are in.</p>',
  messageId: '<bcc-test@acme.test>',
};

test('built: no Bcc header, every recipient in the envelope', async () => {
  const transports = new MailTransports({ smtpUrl: null, smtpMaxConnections: 1, smtpMaxMessages: 10 });
  const built = await transports.build(message);
  const raw = built.message.toString();
  const header = raw.slice(0, raw.indexOf('\r\n\r\n'));
  assert.not.match(header, /^bcc:/im);
  assert.not.match(raw, /hidden@example\.test|also@example\.test/);
  assert.match(header, /^To: ann@example\.test$/m);
  assert.match(header, /^Cc: carl@example\.test$/m);
  assert.equal(built.envelope.to.sort(), [
    'also@example.test',
    'ann@example.test',
    'carl@example.test',
    'hidden@example.test',
  ]);
  transports.close();
});

test('relayed: the relay is told every recipient and receives no Bcc header', async () => {
  const sink = await startSmtpSink();
  const transports = new MailTransports({
    smtpUrl: `smtp://127.0.0.1:${sink.port}`,
    smtpMaxConnections: 1,
    smtpMaxMessages: 10,
  });
  try {
    const target = transports.defaultRelay();
    const result = await transports.deliver(target, message, { sql: null as never, tenantId: null, emailId: null });
    assert.is(result.messageId, '<bcc-test@acme.test>');
    const [received] = sink.messages;
    assert.equal([...received.rcptTo].sort(), [
      'also@example.test',
      'ann@example.test',
      'carl@example.test',
      'hidden@example.test',
    ]);
    assert.not.match(received.raw, /^bcc:/im);
    assert.not.match(received.raw, /hidden@example\.test/);
  } finally {
    transports.close();
    await sink.close();
  }
});

test.run();
