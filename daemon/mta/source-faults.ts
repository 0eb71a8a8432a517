// A delivery whose source address cannot be bound on this node (issue 48 §5). Before, such a row was
// deferred with the socket's error as if the destination had failed, and retried quietly until it
// expired (DELIVERY_EXPIRY_HOURS, five days). Now the loop says so: the row's last response names the
// address and the node ("source address X cannot be bound on node Y"), the pool's address is left out
// on this node for a while (SourceAddressChooser.markUnbindable) so its other addresses carry the mail,
// and the fault is an operator alert: logged at error level once per address, and kept in
// mta_source_faults for GET /platform/queue and `svc queue` until the address binds again.
import { hostname } from 'node:os';
import type { Sql } from '../db/sql.ts';
import { clearSourceFault, recordSourceFault } from './sql/source-faults.ts';

interface Logger {
  error(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

export class SourceFaults {
  /** Addresses this node has recorded as unbindable (so a success clears the row once, not every time). */
  private readonly faulty = new Set<string>();
  readonly node = hostname();

  constructor(
    private readonly sql: Sql,
    private readonly log: Logger,
  ) {}

  /** The response a deferral records for `ip`, from the session's error; records the alert. */
  failed(ip: string | undefined, error: string): string {
    const code = /\bbind (E[A-Z]+)/.exec(error)?.[1] ?? 'bind failed';
    const address = ip ?? 'the system-chosen address';
    const reason = `451 4.4.0 source address ${address} cannot be bound on node ${this.node} (${code}): add it to an interface of this host or remove it from its pool`;
    const key = ip ?? '';
    if (!this.faulty.has(key)) {
      this.faulty.add(key);
      this.log.error({ ip: address, node: this.node, err: error }, 'a source address cannot be bound on this node');
    }
    recordSourceFault(this.sql, { node: this.node, ip: address, reason }).catch((failure: unknown) =>
      this.log.warn({ err: String(failure) }, 'could not record an unbindable source address'),
    );
    return reason;
  }

  /** A session was opened from `ip`: a fault recorded for it is over. */
  bound(ip: string | undefined): void {
    const key = ip ?? '';
    if (!this.faulty.delete(key)) return;
    this.log.info({ ip: ip ?? 'the system-chosen address', node: this.node }, 'a source address binds again');
    clearSourceFault(this.sql, this.node, ip ?? 'the system-chosen address').catch((failure: unknown) =>
      this.log.warn({ err: String(failure) }, 'could not clear an unbindable source address'),
    );
  }
}
