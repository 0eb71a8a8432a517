// Mail addressing, in one place: the service's own mail domain, the fixed mailboxes there
// (List-Unsubscribe's mailto, the DMARC `rua` address, the feedback loop), the VERP return path each
// send carries (`bounce-<email id>@bounces.<verified domain>`, built by the send job and recognised
// by the inbound SMTP listener), the return-path label customers publish, and which SMTP answers
// are hard bounces. Infrastructure: it imports no module, so modules and mail/ may both use it.
import { isIP } from 'node:net';
import type { Config } from '../config.ts';

export const UNSUBSCRIBE_MAILBOX = 'unsubscribe';
export const DMARC_MAILBOX = 'dmarc-reports';
export const FEEDBACK_MAILBOX = 'fbl';

/** The label under a customer's domain that bounces are routed through: `bounces.<domain>`. */
export const RETURN_PATH_LABEL = 'bounces';

/** The local part of a VERP return path; its group is the email id. */
export const VERP = /^bounce-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** RCPT answers that say the recipient does not exist: hard bounces (the recipient is suppressed). */
export const HARD_BOUNCE_CODES = new Set([550, 551, 553]);

/** The VERP envelope sender of one send, at its return-path domain. */
export function verpReturnPath(emailId: string, returnPathDomain: string): string {
  return `bounce-${emailId}@${returnPathDomain}`;
}

export function returnPathName(domainName: string): string {
  return `${RETURN_PATH_LABEL}.${domainName}`;
}

/** The host part of the fallback sender: PUBLIC_URL's host name, or localhost for a bare IP. */
export function systemMailDomain(config: Pick<Config, 'publicUrl'>): string {
  const host = new URL(config.publicUrl).hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) || host === '' ? 'localhost' : host;
}

/** The domain of the fixed mailboxes when inbound mail is received; null when SMTP_INBOUND_PORT is off (advertise nothing). */
export function inboundMailDomain(config: Pick<Config, 'smtpInboundPort' | 'publicUrl'>): string | null {
  return config.smtpInboundPort > 0 ? systemMailDomain(config) : null;
}

/** `mailto:dmarc-reports@<mail domain>` for the DMARC record tenants publish, or null when inbound is off. */
export function dmarcReportAddress(config: Pick<Config, 'smtpInboundPort' | 'publicUrl'>): string | null {
  const domain = inboundMailDomain(config);
  return domain ? `${DMARC_MAILBOX}@${domain}` : null;
}
