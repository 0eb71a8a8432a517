// The registry of running daemons (table daemon_nodes): each node upserts its row at boot,
// refreshes it every NODE_HEARTBEAT_MS and deletes it on a clean stop; a node that died simply
// stops being "seen". `svc doctor` reads it to tell one node from several, and the shaper divides its
// rates by the nodes seen. It lives in db/ because both the MTA and the modules read it.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { Config, Role } from '../config.ts';

/**
 * 10 s: the MTA loops divide their shaping figures by the nodes seen, so a killed worker node's share
 * comes back to the others once it is not seen for 30 s (a clean stop gives it back at once).
 */
export const NODE_HEARTBEAT_MS = 10_000;
/** A node not seen for this long is counted as gone (three missed heartbeats). */
export const NODE_SEEN_WITHIN_MS = 3 * NODE_HEARTBEAT_MS;

export interface NodeRegistration {
  id: string;
  stop(): Promise<void>;
}

export async function registerNode(
  sequelize: Sequelize,
  node: { role: Role; redis: boolean; delivery: Config['delivery'] },
  onError: (error: unknown) => void,
  /**
   * A channel NOTIFYed when this node joins and when it leaves cleanly: the MTA loops divide their
   * shaping figures by the nodes seen and reload at once on it, instead of up to 30 s later, so the
   * nodes' shares never add up past a provider's figure meanwhile (docs/mta.md "Several worker nodes").
   */
  announce?: string,
): Promise<NodeRegistration> {
  const id = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const beat = () =>
    sequelize.query(
      `INSERT INTO daemon_nodes (id, hostname, pid, role, redis, delivery)
       VALUES (:id, :hostname, :pid, :role, :redis, :delivery)
       ON CONFLICT (id) DO UPDATE SET last_seen_at = now()`,
      { replacements: { id, hostname: hostname(), pid: process.pid, ...node } },
    );
  const announced = () =>
    announce ? sequelize.query('SELECT pg_notify(:announce, :id)', { replacements: { announce, id } }) : null;
  await beat();
  await announced();
  const timer = setInterval(() => beat().catch(onError), NODE_HEARTBEAT_MS);
  timer.unref();
  return {
    id,
    async stop() {
      clearInterval(timer);
      await sequelize.query('DELETE FROM daemon_nodes WHERE id = :id', { replacements: { id } }).catch(onError);
      await announced()?.catch(onError);
    },
  };
}

export interface SeenNode {
  id: string;
  role: string;
  redis: boolean;
  /** DELIVERY of the node; null for a node started before it was recorded. */
  delivery: 'relay' | 'direct' | null;
}

export async function seenNodes(sequelize: Sequelize): Promise<SeenNode[]> {
  return sequelize.query<SeenNode>(
    `SELECT id, role, redis, delivery FROM daemon_nodes WHERE last_seen_at > now() - make_interval(secs => :seconds) ORDER BY started_at`,
    { replacements: { seconds: NODE_SEEN_WITHIN_MS / 1000 }, type: QueryTypes.SELECT },
  );
}
