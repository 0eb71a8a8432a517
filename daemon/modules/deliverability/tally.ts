// Deliverability counts per tenant, provider and UTC day (migrations/0390): every recorded outcome
// adds to a tally, and the tally is written in the transaction that records the outcomes, in one
// statement (sql.ts), so a counter row is locked once per transaction, last, in key order: the MTA's
// batch commits (one tally per batch) and the one-outcome transactions of the relay and the inbound
// receivers then never wait on each other in a cycle.
//
// The provider is the one the MTA's MX hosts matched (mta/providers.ts providerOf) when it knows them;
// otherwise (a complaint, a late bounce, a relay's report) the provider the MTA last saw for the
// recipient's domain (destination_providers), else the well-known consumer domains, else `default`.

export const DELIVERABILITY_COUNTS = ['delivered', 'deferred', 'bounced', 'complained'] as const;
export type DeliverabilityCount = (typeof DELIVERABILITY_COUNTS)[number];

/** One line of a tally: a provider, or (provider unknown) a recipient domain to resolve in SQL. */
export interface TallyLine {
  tenantId: string;
  provider: string | null;
  /** The recipients' domain when the provider is unknown; '' otherwise. */
  domain: string;
  counts: Record<DeliverabilityCount, number>;
}

export class DeliverabilityTally {
  private readonly lines = new Map<string, TallyLine>();
  /** Recipient domain → the provider its MX hosts matched, seen in this batch. */
  readonly providersSeen = new Map<string, string>();

  /** Counts `recipients` of a tenant under `provider`, or under their domains' providers when null. */
  add(tenantId: string, kind: DeliverabilityCount, recipients: readonly string[], provider: string | null): void {
    for (const recipient of recipients) {
      const domain = provider ? '' : recipientDomain(recipient);
      const key = `${tenantId}\t${provider ?? ''}\t${domain}`;
      let line = this.lines.get(key);
      if (!line) {
        line = { tenantId, provider, domain, counts: { delivered: 0, deferred: 0, bounced: 0, complained: 0 } };
        this.lines.set(key, line);
      }
      line.counts[kind] += 1;
    }
  }

  /** The MTA saw `domain`'s MX hosts belong to `provider`: later reports for it count there. */
  sawProvider(domain: string, provider: string): void {
    this.providersSeen.set(domain.toLowerCase(), provider);
  }

  get isEmpty(): boolean {
    return this.lines.size === 0 && this.providersSeen.size === 0;
  }

  entries(): TallyLine[] {
    return [...this.lines.values()];
  }
}

export function recipientDomain(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase();
}

/**
 * What an outcome recorded by emails/outcomes.ts counts as, for the recipients it was new for: a soft
 * bounce that does not end the send (a relay's 4.x.x report) is a deferral; a final one, a bounce.
 */
/**
 * What a tally reads of an outcome (emails/outcomes.ts DeliveryOutcome, which calls this): declared here
 * so that the tally does not import the module that imports it.
 */
export interface CountedOutcome {
  tenantId: string;
  type: 'delivered' | 'bounced' | 'complained';
  bounceType?: 'hard' | 'soft' | 'policy';
  final?: boolean;
  provider?: string;
}

export function countDeliveryOutcome(
  tally: DeliverabilityTally,
  outcome: CountedOutcome,
  recipients: readonly string[],
): void {
  const kind: DeliverabilityCount =
    outcome.type === 'delivered'
      ? 'delivered'
      : outcome.type === 'complained'
        ? 'complained'
        : outcome.bounceType === 'soft' && !outcome.final
          ? 'deferred'
          : 'bounced';
  tally.add(outcome.tenantId, kind, recipients, outcome.provider ?? null);
}
