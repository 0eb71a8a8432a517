// Whether a per-tenant throttle would do anything (issue 48 §5). Throttles are applied by the MTA's
// shaping (mta/shaping.ts), which runs only where worker nodes deliver directly (DELIVERY=direct);
// through a relay (SMTP_URL, or capture) the send drain hands each message over as it comes, and a
// throttle would answer 200 and pace nothing. DELIVERY is each node's own configuration and the node
// answering the API may not send mail at all, so the answer comes from the node registry
// (daemon_nodes, where every node records its role and delivery): while any live worker node relays,
// a throttle is refused. With no worker node registered (one process, tests, or workers down) the
// answering node's own DELIVERY decides.
import type { Sequelize } from 'sequelize';
import type { Config } from '../../config.ts';
import { seenNodes } from '../../db/nodes.ts';
import { ConflictError } from '../../errors.ts';

const WORKER_ROLES = new Set(['worker', 'all']);

/** The worker nodes that deliver through a relay, or null when mail is delivered directly. */
async function relayingNodes(sequelize: Sequelize, config: Pick<Config, 'delivery'>): Promise<string[] | null> {
  const workers = (await seenNodes(sequelize)).filter((node) => WORKER_ROLES.has(node.role));
  const known = workers.filter((node) => node.delivery !== null);
  if (known.length === 0) return config.delivery === 'relay' ? [] : null;
  const relaying = known.filter((node) => node.delivery === 'relay').map((node) => node.id);
  return relaying.length > 0 ? relaying : null;
}

/** A 409 when a throttle set now would pace nothing: some (or all) mail leaves through a relay. */
export async function assertThrottleApplies(sequelize: Sequelize, config: Pick<Config, 'delivery'>): Promise<void> {
  const relaying = await relayingNodes(sequelize, config);
  if (!relaying) return;
  const where = relaying.length > 0 ? ` (DELIVERY=relay on worker node ${relaying.join(', ')})` : ' (DELIVERY=relay)';
  throw new ConflictError(
    `Not applied: throttles apply to direct delivery; this platform delivers through a relay${where}, which ` +
      "would hand the tenant's mail over unpaced. Set DELIVERY=direct on every worker node to use throttles, or " +
      'limit the tenant at the relay. Lifting a throttle (both limits null) is always accepted.',
    'THROTTLE_NEEDS_DIRECT_DELIVERY',
  );
}
