// What `svc inbound show` prints and the tail screen's detail shows: one description of a routed message.
import type { InboundMessageDetail } from '../../shared/schemas/inbound.ts';
import type { InboundAddress, InboundAuth } from '../../shared/schemas/inbound-message.ts';

const mailbox = (a: InboundAddress) => (a.name ? `${a.name} <${a.address}>` : a.address);
export const mailboxes = (list: InboundAddress[]) => list.map(mailbox).join(', ');

/** spf=pass dkim=pass(acme.com) dmarc=pass arc=none: one line, as an Authentication-Results reader would scan it. */
export function verdictLine(auth: InboundAuth): string {
  const signers = auth.dkim.signatures.map((s) => s.domain).join(',');
  return [
    `spf=${auth.spf.result}${auth.spf.domain ? `(${auth.spf.domain})` : ''}`,
    `dkim=${auth.dkim.result}${signers ? `(${signers})` : ''}`,
    `dmarc=${auth.dmarc.result}${auth.dmarc.policy ? `(p=${auth.dmarc.policy})` : ''}`,
    `arc=${auth.arc.result}`,
  ].join(' ');
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** Label and value pairs, in reading order; a null value is a field the message lacks. */
export function messageFields(message: InboundMessageDetail): [string, string | null][] {
  const p = message.parsed;
  return [
    ['id', message.id],
    ['status', message.status + (message.error ? `  ${message.error}` : '')],
    ['from', mailbox(p.from) || message.from],
    [
      'envelope',
      `${message.mailFrom ?? '<>'} → ${message.recipient}${message.clientIp ? ` (${message.clientIp})` : ''}`,
    ],
    ['to', mailboxes(p.to) || null],
    ['cc', mailboxes(p.cc) || null],
    ['subject', p.subject],
    ['date', p.date],
    ['received', message.createdAt],
    ['message-id', p.messageId],
    ['verdicts', verdictLine(p.auth)],
    [
      'answers',
      message.inReplyTo ? `email ${message.inReplyTo.emailId} (svc logs show ${message.inReplyTo.emailId})` : null,
    ],
    ['route', message.routeId],
    ['size', formatBytes(message.size)],
  ];
}

export function attachmentLines(message: InboundMessageDetail): string[] {
  return message.parsed.attachments.map(
    (a) => `${a.filename ?? '(unnamed)'}  ${a.contentType}  ${formatBytes(a.size)}${a.url ? `  ${a.url}` : ''}`,
  );
}
