// What one delivery attempt or report said of a send: the relay's answer (emails/send-job.ts), the
// MTA's settle step (mta/settle.ts) and DSN/ARF reports (inbound/) all produce it; emails/outcomes.ts
// records it. In mail/ so the MTA can name it without importing the module that records it.
export interface DeliveryOutcome {
  tenantId: string;
  emailId: string;
  type: 'delivered' | 'bounced' | 'complained';
  /**
   * hard bounces (and complaints) suppress the recipient; soft and policy (refused for the sender's
   * sake: spam, reputation, DMARC — the outbound MTA's mta/outcome.ts) bounces do not. Policy bounces
   * count toward the tenant's pause as hard bounces do.
   */
  bounceType?: 'hard' | 'soft' | 'policy';
  /** A soft bounce that ends the send (direct delivery: mailbox full, or expired) rather than a timeline note. */
  final?: boolean;
  /**
   * The recipients concerned, already matched against the send (inbound/service.ts does it for
   * reports); absent: every recipient of the log (the relay refused the whole message).
   */
  recipients?: string[];
  diagnostic?: string | null;
  /** The provider whose MX hosts the MTA talked to (mta/providers.ts); absent: told by the recipient's domain. */
  provider?: string;
}
