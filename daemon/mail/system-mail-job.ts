// The worker side of system mail (queue "system"): unseal the content, resolve the sender now (a
// sender fixed later still applies to mail waiting in the queue), sign with the platform's verified
// domain, deliver through the default relay (SMTP_URL, else capture). A transient failure (4xx,
// relay unreachable) is retried with the send backoff; a permanent one fails the job, kept in
// failed_jobs with the reason.
import { errorText } from '../errors.ts';
import type { JobHandler } from './worker-context.ts';
import { backoffDelayMs } from '../queue/backoff.ts';
import { unseal } from '../crypto/sealed.ts';
import { returnPathFor } from './addresses.ts';
import { DKIM_SIGNED_HEADERS } from './compose.ts';
import { classifyDeliveryError } from './transport.ts';
import { relayTlsProblem } from './relay-tls.ts';
import { arcSealed } from './arc-seal.ts';
import {
  platformSigningTenant,
  resolveSystemSender,
  systemSenderRefusal,
  type SystemMailContent,
} from './system-mail.ts';
import type Mail from 'nodemailer/lib/mailer';

export const handleSystemMailJob: JobHandler = async (job, ctx) => {
  const { sequelize, config, secrets, log } = ctx;
  if (typeof job.payload.sealed !== 'string') return { kind: 'fail', error: 'system mail job without sealed content' };
  let mail: SystemMailContent;
  try {
    mail = JSON.parse(unseal(secrets.encryptionKey, job.payload.sealed)) as SystemMailContent;
  } catch (error) {
    return {
      kind: 'fail',
      error: `the system mail could not be opened: ${errorText(error)}`,
    };
  }

  const sender = await resolveSystemSender(sequelize, config);
  const refusal = systemSenderRefusal(sender, config);
  if (refusal) {
    log.error({ job: job.id }, refusal);
    return { kind: 'fail', error: refusal };
  }
  const signing = sender.routable ? await platformSigningTenant(sequelize, sender.domain) : null;
  const [dkim, returnPath] = signing
    ? await Promise.all([
        ctx.dkimSigning.dkimFor(signing.tenantId, sender.domain),
        returnPathFor(ctx, signing.tenantId, sender.domain),
      ])
    : [null, null];

  const signed = 'raw' in mail ? [DKIM_SIGNED_HEADERS, ...(mail.signHeaders ?? [])].join(':') : DKIM_SIGNED_HEADERS;
  // A forward is sealed with the key that signs it, so that the seal and the signature name one domain.
  const sealed =
    'raw' in mail && mail.arcSeal && dkim ? await arcSealed(Buffer.from(mail.raw, 'base64'), dkim, mail.arcSeal) : null;
  const message: Mail.Options = {
    ...('raw' in mail
      ? { raw: sealed ?? Buffer.from(mail.raw, 'base64') }
      : {
          from: sender.from,
          to: mail.to,
          subject: mail.subject,
          html: mail.html,
          text: mail.text,
          // On the sender's domain and the same on every attempt, so a duplicate after a crash is recognisable.
          messageId: `<${mail.messageKey}@${sender.domain}>`,
          headers: {
            'Auto-Submitted': 'auto-generated',
            ...(mail.locale ? { 'Content-Language': mail.locale } : {}),
          },
        }),
    // The envelope sender is on the From domain (SPF aligned), or its verified bounce subdomain; a
    // forward's is the SRS address it was given (our return-path domain, so SPF passes there too).
    envelope: {
      from:
        'raw' in mail && mail.envelopeFrom !== undefined
          ? (mail.envelopeFrom ?? '')
          : returnPath
            ? `bounce-system@${returnPath}`
            : sender.address,
      to: [mail.to],
    },
    dkim: dkim ? { ...dkim, headerFieldNames: signed } : undefined,
  };
  try {
    await ctx.mailTransports.deliver(ctx.mailTransports.defaultRelay(), message, {
      sql: ctx.sql,
      tenantId: null,
      emailId: null,
    });
    return { kind: 'done' };
  } catch (error) {
    const failure = classifyDeliveryError(error);
    // A reset or invitation that does not leave is invisible to the person waiting for it: the
    // operator must see each failed attempt, its cause and, for a certificate, the fix.
    const tls = relayTlsProblem(error);
    const attempt = job.attempts + 1;
    const context = {
      job: job.id,
      queue: job.queue,
      attempt,
      maxAttempts: job.maxAttempts,
      err: failure.message,
      ...(failure.responseCode !== null ? { responseCode: failure.responseCode } : {}),
      ...(tls ? { tlsError: tls.code, fix: tls.fix } : {}),
    };
    if (failure.kind === 'transient') {
      const delayMs = backoffDelayMs(job.attempts, config.sendRetryBaseMs);
      if (attempt < job.maxAttempts)
        log.warn({ ...context, retryInMs: delayMs }, 'system mail not delivered: the relay failed; retrying');
      else log.warn(context, 'system mail not delivered: no attempts left');
      return { kind: 'retry', delayMs, error: failure.message };
    }
    log.warn(context, 'system mail not delivered: the relay refused it for good');
    return { kind: 'fail', error: failure.message };
  }
};
