// The connections to one destination (an MX host set): at most `maxConnections` sessions, each
// recycled after `maxMessagesPerConnection` messages, idle ones reused by the next message whatever its
// tenant, and closed after `idleTimeoutMs`. New sessions go to the MX hosts in route order, every address
// of a host before the next host; a host that cannot be reached (refused, timed out, TLS demanded and
// not given) passes the message to the next one, a host that answers decides (RFC 5321 §5.1).
import { deferredByError } from './outcome.ts';
import {
  demandKeyOf,
  SessionFailure,
  SmtpSession,
  type Envelope,
  type RecipientResult,
  type SessionOptions,
  type TlsDemand,
} from './connection.ts';
import type { MxHost } from './mx.ts';

export interface PoolLimits {
  maxConnections: number;
  maxMessagesPerConnection: number;
  /** RCPTs per transaction; more recipients in one domain become several transactions (Postfix: 50). */
  maxRecipientsPerTransaction: number;
  idleTimeoutMs: number;
}

/**
 * 20 connections per destination is Postfix's default_destination_concurrency_limit: at 10, a destination
 * that takes 200 ms to answer DATA drained at 50 msg/s and became the tail of bench:mta's runs (the
 * providers that publish a lower figure have their own rule in providers.ts).
 */
export const DEFAULT_POOL_LIMITS: PoolLimits = {
  maxConnections: 20,
  maxMessagesPerConnection: 100,
  maxRecipientsPerTransaction: 50,
  idleTimeoutMs: 10_000,
};

/** The TLS a host needs, or why it may not be used at all (MTA-STS enforce: not a listed MX). */
export type TlsPlan = (host: MxHost) => TlsDemand | { refuse: string };

/** A TLS outcome per MX host tried, for TLS-RPT. */
export interface TlsAttempt {
  host: string;
  /** The address connected to (TLS-RPT's `receiving-ip`). */
  address?: string;
  failure: string | null;
}

export interface DeliveryReport {
  recipients: RecipientResult[];
  /** The MX host that answered, when one did. */
  host: string | null;
  secure: boolean;
  tlsAttempts: TlsAttempt[];
  /** The session's source address could not be bound (the error): nothing was tried, no host is to blame. */
  unbindable?: string;
}

/** Why no session could be opened. */
interface Unopened {
  reason: string;
  unbindable?: boolean;
}

export class DestinationPool {
  private readonly idle: { session: SmtpSession; timer: NodeJS.Timeout }[] = [];
  private readonly waiters: (() => void)[] = [];
  private open = 0;
  private closed = false;

  constructor(
    private limits: PoolLimits,
    private readonly session: SessionOptions,
  ) {}

  /**
   * New limits (shaping: an admin's edit, a reaction's slow-down, another node joining). Sessions
   * above a lowered connection limit finish their message and close instead of waiting idle.
   */
  setLimits(limits: PoolLimits): void {
    const raised = limits.maxConnections > this.limits.maxConnections;
    this.limits = limits;
    if (raised) for (const waiter of this.waiters.splice(0)) waiter();
    // Idle sessions above a lowered limit close now: an idle session is still a connection the MX host
    // counts, and the node that joined (its share taken from this one) may open its own at once.
    for (let excess = this.open - limits.maxConnections; excess > 0 && this.idle.length > 0; excess--) {
      const [surplus] = this.idle.splice(0, 1);
      clearTimeout(surplus.timer);
      surplus.session.close();
    }
  }

  /** Sessions open now (in use or idle). */
  get connections(): number {
    return this.open;
  }

  /**
   * Sends `message` to the envelope's recipients, one transaction per `maxRecipientsPerTransaction`.
   * `onAnswered` runs after each transaction the destination answered, awaited before the next (the
   * loop marks the spool row there, so an answered transaction is never sent again after a crash).
   */
  async deliver(
    hosts: MxHost[],
    tlsPlan: TlsPlan,
    envelope: Envelope,
    message: Buffer,
    onAnswered?: (results: RecipientResult[]) => Promise<void>,
  ): Promise<DeliveryReport> {
    const report: DeliveryReport = { recipients: [], host: null, secure: false, tlsAttempts: [] };
    for (let i = 0; i < envelope.to.length; i += this.limits.maxRecipientsPerTransaction) {
      const to = envelope.to.slice(i, i + this.limits.maxRecipientsPerTransaction);
      const acquired = await this.acquire(hosts, tlsPlan, report.tlsAttempts);
      if (!(acquired instanceof SmtpSession)) {
        if (acquired.unbindable) report.unbindable = acquired.reason;
        report.recipients.push(...to.map((address) => ({ address, verdict: deferredByError(acquired.reason) })));
        continue;
      }
      report.host = acquired.host;
      report.secure = acquired.secure;
      const results = await acquired.send({ from: envelope.from, to }, message);
      report.recipients.push(...results);
      this.release(acquired);
      await onAnswered?.(results);
    }
    return report;
  }

  private async acquire(hosts: MxHost[], tlsPlan: TlsPlan, tlsAttempts: TlsAttempt[]): Promise<SmtpSession | Unopened> {
    for (;;) {
      if (this.closed) return { reason: 'delivery is shutting down' };
      // An idle session serves this message only if the host is still in the route and the TLS policy
      // (which may have changed since: a new MTA-STS policy, TLSA records) still asks for what it has.
      const index = this.idle.findIndex(({ session }) => {
        const host = hosts.find((candidate) => candidate.name === session.host);
        const demand = host ? tlsPlan(host) : null;
        return demand !== null && !('refuse' in demand) && demandKeyOf(demand) === session.demandKey;
      });
      if (index >= 0) {
        const [idle] = this.idle.splice(index, 1);
        clearTimeout(idle.timer);
        if (!idle.session.broken) return idle.session;
        continue;
      }
      // A pool shared by the destinations of one provider (shaping.ts) may hold idle sessions to an MX
      // host this route does not name: at the limit, one of them makes room rather than idling it out.
      if (this.open >= this.limits.maxConnections && this.idle.length > 0) {
        const [stale] = this.idle.splice(0, 1);
        clearTimeout(stale.timer);
        stale.session.close();
        continue;
      }
      if (this.open < this.limits.maxConnections) {
        this.open++;
        const opened = await this.connect(hosts, tlsPlan, tlsAttempts);
        if (opened instanceof SmtpSession) {
          opened.onClose(() => this.forget());
          return opened;
        }
        this.forget();
        return opened;
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  private async connect(hosts: MxHost[], tlsPlan: TlsPlan, tlsAttempts: TlsAttempt[]): Promise<SmtpSession | Unopened> {
    const failures: string[] = [];
    for (const host of hosts) {
      const demand = tlsPlan(host);
      if ('refuse' in demand) {
        failures.push(`${host.name}: ${demand.refuse}`);
        continue;
      }
      for (const address of host.addresses) {
        try {
          const session = await SmtpSession.open(host.name, address, demand, this.session);
          if (session.secure || demand.mode === 'required' || demand.reportOnly)
            tlsAttempts.push({ host: host.name, address, failure: session.tlsProblem });
          return session;
        } catch (error) {
          const failure = error instanceof SessionFailure ? error : new SessionFailure(String(error));
          // The source address is the fault: every other host would fail the same way.
          if (failure.bindFailure) return { reason: failure.message, unbindable: true };
          failures.push(failure.message);
          if (failure.tlsFailure) tlsAttempts.push({ host: host.name, address, failure: failure.tlsFailure });
        }
      }
    }
    return { reason: failures.length > 0 ? failures.join('; ') : 'no MX host to try' };
  }

  private release(session: SmtpSession): void {
    if (session.broken) return; // its close already freed its place
    if (
      this.closed ||
      session.messagesSent >= this.limits.maxMessagesPerConnection ||
      this.open > this.limits.maxConnections
    ) {
      session.close();
      return;
    }
    const timer = setTimeout(() => {
      const index = this.idle.findIndex((entry) => entry.session === session);
      if (index >= 0) this.idle.splice(index, 1);
      session.close();
    }, this.limits.idleTimeoutMs);
    timer.unref();
    this.idle.push({ session, timer });
    this.waiters.shift()?.();
  }

  /** A session ended (or never opened): its place goes to the next waiter. */
  private forget(): void {
    this.open--;
    this.waiters.shift()?.();
  }

  /** Closes idle sessions and refuses new work; sessions in use close when their message is done. */
  close(): void {
    this.closed = true;
    for (const { session, timer } of this.idle.splice(0)) {
      clearTimeout(timer);
      session.close();
    }
    for (const waiter of this.waiters.splice(0)) waiter();
  }
}
