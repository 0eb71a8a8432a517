// Bounces of forwards (docs/inbound.md "Bounces of forwards"): a forward leaves with the SRS envelope
// sender `SRS0=<hash>=<tt>=<domain>=<local>@<return-path domain>` (srs.ts, forward.ts), so a receiver
// that cannot deliver it sends its DSN there. The listener takes such a recipient only when the
// message is a bounce (null MAIL FROM) and the address is one we wrote and still honour (srsReverse:
// the hash holds under our key, at most SRS_MAX_AGE_DAYS old); the DSN then goes back, as it came, to
// the sender the address stands for, with the null envelope sender (a bounce is never bounced). Any
// other mail to an SRS address is refused at RCPT TO: with a forged or stale hash we would relay for
// anyone, and a non-null sender there is not a bounce (answering it would be backscatter).
import type { Transaction } from 'sequelize';
import { sendSystemMail } from '../../mail/system-mail.ts';
import { srsDomain, type ForwardDeps } from './forward.ts';
import { srsReverse } from './srs.ts';

export type SrsRecipient = { to: string } | { refusal: string };

/**
 * What an RCPT TO at our SRS domain is: the original sender to return the bounce to, a refusal, or
 * null when the address is no SRS address of ours (the other questions of the listener decide it).
 */
export async function classifySrsRecipient(
  deps: Pick<ForwardDeps, 'sequelize' | 'config' | 'secrets'>,
  address: string,
  mailFrom: string | null,
  nowMs = Date.now(),
): Promise<SrsRecipient | null> {
  const at = address.lastIndexOf('@');
  if (at <= 0) return null;
  const local = address.slice(0, at);
  if (!/^srs0=/i.test(local)) return null;
  const domain = address
    .slice(at + 1)
    .toLowerCase()
    .replace(/\.$/, '');
  if (domain !== (await srsDomain(deps)).toLowerCase()) return null;
  if (mailFrom !== null)
    return { refusal: `<${address}>: this address takes only bounces (a null sender) of mail we forwarded.` };
  const to = srsReverse(deps.secrets.linkSigningKey, local, nowMs);
  if (!to) return { refusal: `<${address}>: not a forwarding address of ours, or older than we honour bounces to.` };
  return { to };
}

/**
 * Queues the bounce back to the original sender of a forward: the message as received, envelope
 * sender null, through the platform's durable system-mail queue (signed there with the platform key,
 * as a forward is). One job per original sender.
 */
export async function returnSrsBounce(
  deps: Pick<ForwardDeps, 'sequelize' | 'config' | 'secrets'>,
  input: { to: string; raw: Buffer },
  transaction?: Transaction,
): Promise<{ jobId: string }> {
  return sendSystemMail(
    deps,
    {
      to: input.to,
      subject: `bounce of a forward, returned to ${input.to}`,
      raw: input.raw.toString('base64'),
      envelopeFrom: null,
    },
    transaction,
  );
}
