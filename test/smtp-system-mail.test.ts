import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { simpleParser } from 'mailparser';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { sendSystemMail, latestCapturedMessageTo } from '../daemon/mail/system-mail.ts';
import { closeTransports } from '../daemon/mail/transport.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp-sink.ts';

let ctx: TestContext;
let sink: SmtpSink;
test.before(async () => {
  sink = await startSmtpSink();
  ctx = await createTestContext();
});
test.after(async () => {
  closeTransports();
  await ctx?.close();
  await sink?.close();
});

test('without SMTP_URL a system mail is captured whole and readable', async () => {
  const deps = { sequelize: ctx.db.sequelize, config: ctx.config, secrets: ctx.deps.secrets };
  const { messageId } = await sendSystemMail(deps, { to: 'Someone@Example.test', subject: 'Reset', html: '<p>Hi <b>there</b></p>', text: 'Hi there', locale: 'es' });
  assert.match(messageId, /^<.+@localhost>$/);
  const captured = await latestCapturedMessageTo(ctx.db.sequelize, 'someone@example.test');
  assert.ok(captured);
  const parsed = await simpleParser(captured!.raw);
  assert.is(parsed.subject, 'Reset');
  assert.is(parsed.messageId, messageId);
  assert.is(parsed.text?.trim(), 'Hi there');
  assert.is(parsed.headers.get('content-language'), 'es');
  assert.is(sink.messages.length, 0);
});

test('with SMTP_URL a system mail is relayed to the server', async () => {
  const config = { ...ctx.config, smtpUrl: `smtp://127.0.0.1:${sink.port}` };
  const deps = { sequelize: ctx.db.sequelize, config, secrets: ctx.deps.secrets };
  const { messageId } = await sendSystemMail(deps, { to: 'relay@example.test', subject: 'Verify', html: '<p>v</p>', text: 'v' });
  const received = await sink.waitFor((m) => m.parsed.messageId === messageId);
  assert.equal(received.rcptTo, ['relay@example.test']);
  assert.is(received.parsed.subject, 'Verify');
  assert.is(await latestCapturedMessageTo(ctx.db.sequelize, 'relay@example.test'), null);
});

test.run();
