// The outbound MTA's side of the spool transport (mail/transport.ts's SpoolPort): a message built and
// signed by a send thread becomes one spool row per recipient domain (the MTA finds their MX hosts
// later; mail/ learns nothing about them). Given to MailTransports at wiring (modules/mail-resources.ts),
// so mail/ does not import the MTA. One per MailTransports: a thread's spooler announces its messages to
// this process's MTA thread (spooled-messages.ts) and group-commits its inserts per database handle
// (sql/spool-insert.ts).
import { randomUUID } from 'node:crypto';
import type { Sql } from '../db/sql.ts';
import { recipientDomain, type SpoolPort, type SpoolRequest } from '../mail/transport.ts';
import { DEFAULT_DELIVERY_EXPIRY_HOURS } from './retry.ts';
import { SpooledMessageAnnouncer } from './spooled-messages.ts';
import { SpoolWriter } from './sql/spool-insert.ts';
import { SPOOL_CHANNEL } from './sql/spool.ts';
import { notifyAfterCommit } from '../queue/enqueue.ts';

/** The recipients grouped by destination domain (recipientDomain), in the order first met: a spool row each. */
export function recipientsByDomain(recipients: string[]): Map<string, string[]> {
  const byDomain = new Map<string, string[]>();
  for (const address of recipients) {
    const domain = recipientDomain(address);
    const addresses = byDomain.get(domain);
    if (addresses) addresses.push(address);
    else byDomain.set(domain, [address]);
  }
  return byDomain;
}

/**
 * Wakes the MTA loops after spool rows were committed by a statement that does not notify itself (the
 * accept of a submission: a NOTIFY inside a synchronous commit holds PostgreSQL's notify lock through the
 * WAL flush and serialises every such commit, queue/enqueue.ts).
 */
export function wakeMtaLoops(sql: Sql): void {
  notifyAfterCommit(sql, SPOOL_CHANNEL);
}

export class MtaSpooler implements SpoolPort {
  /** Hands each spooled message to this process's MTA thread in memory (spooled-messages.ts). */
  private readonly spooled = new SpooledMessageAnnouncer();
  /** The spool's group commit per database handle (a thread has one). */
  private readonly writers = new WeakMap<Sql, SpoolWriter>();

  /** `expiryHours`: how long a row is tried before it expires (DELIVERY_EXPIRY_HOURS). */
  constructor(private readonly expiryHours = DEFAULT_DELIVERY_EXPIRY_HOURS) {}

  /** Spools the message, one row per recipient domain, and wakes the MTA loop (the insert's NOTIFY). */
  async spool(request: SpoolRequest): Promise<{ added: number; destinations: number }> {
    const { owner } = request;
    const byDomain = recipientsByDomain(request.recipients);
    const ids = [...byDomain.keys()].map(() => randomUUID());
    this.spooled.announce(ids, request.message);
    let writer = this.writers.get(owner.sql);
    if (!writer) {
      writer = new SpoolWriter(owner.sql);
      this.writers.set(owner.sql, writer);
    }
    const added = await writer.spool({
      ids,
      tenantId: owner.tenantId,
      emailId: owner.emailId,
      projectId: owner.projectId ?? null,
      stream: owner.stream ?? 'transactional',
      envelopeFrom: request.envelopeFrom,
      message: request.message,
      expiryHours: this.expiryHours,
      byDomain,
      log: owner.log ?? null,
    });
    return { added, destinations: byDomain.size };
  }

  close(): void {
    this.spooled.close();
  }
}
