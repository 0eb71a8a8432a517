// Source addresses a node could not bind (table mta_source_faults, migration 0463; mta/source-faults.ts):
// the MTA thread records and clears its own node's rows, the queue view reads every node's.
import { declare, type Sql } from '../../db/sql.ts';

const RECORD_SOURCE_FAULT = declare(
  'mta_source_fault_record',
  `
  INSERT INTO mta_source_faults (node, ip, reason) VALUES ($1, $2, $3)
  ON CONFLICT (node, ip) DO UPDATE SET reason = EXCLUDED.reason, last_seen_at = now()`,
);

const CLEAR_SOURCE_FAULT = declare(
  'mta_source_fault_clear',
  `DELETE FROM mta_source_faults WHERE node = $1 AND ip = $2`,
);

const READ_SOURCE_FAULTS = declare(
  'mta_source_faults_read',
  `SELECT node, ip, reason, since, last_seen_at FROM mta_source_faults ORDER BY node, ip`,
);

export interface SourceFault {
  node: string;
  ip: string;
  reason: string;
  since: Date;
  lastSeenAt: Date;
}

export async function recordSourceFault(sql: Sql, fault: Pick<SourceFault, 'node' | 'ip' | 'reason'>): Promise<void> {
  await sql.count(RECORD_SOURCE_FAULT, [fault.node, fault.ip, fault.reason]);
}

export async function clearSourceFault(sql: Sql, node: string, ip: string): Promise<void> {
  await sql.count(CLEAR_SOURCE_FAULT, [node, ip]);
}

/** Every node's unbindable source addresses (GET /platform/queue). */
export async function readSourceFaults(sql: Sql): Promise<SourceFault[]> {
  const rows = await sql.rows<{ node: string; ip: string; reason: string; since: Date; last_seen_at: Date }>(
    READ_SOURCE_FAULTS,
    [],
  );
  return rows.map((row) => ({
    node: row.node,
    ip: row.ip,
    reason: row.reason,
    since: row.since,
    lastSeenAt: row.last_seen_at,
  }));
}
