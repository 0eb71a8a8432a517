// `npm run bench:mta -- --nodes 2`: direct delivery shared by two worker nodes (issue 51 §4), beside the
// one-node svc column of the same run. A second `ROLE=worker DELIVERY=direct` node joins the API node
// and the first worker on the bench database, saying its own EHLO name so that the sinks count each
// node's share. Two columns:
//   svc, 2 worker nodes            the same messages and sinks as the one-node column;
//   svc, 2 nodes, one killed       the second node is killed (SIGKILL) once a third of the run has
//                                  arrived: every message must still arrive, the duplicates at most what
//                                  it held (its leased spool rows at the kill), and its rows are taken
//                                  over once their lease (20 s) runs out.
// Counted at the sinks: distinct Message-IDs and duplicates, connections open at once per MX host and
// messages per connection against the provider's figures (the shipped `default`: 20 and 100, over the
// nodes together), and messages per node. The database's cost per message (statements and WAL bytes)
// is measured by bench/mta-wal.ts around the two-node column.
import { QueryTypes, type Sequelize } from 'sequelize';
import { DEFAULT_PROVIDERS } from '../daemon/mta/providers.ts';
import type { Child } from './children.ts';
import type { ColumnFigures, SinksClient } from './mta-figures.ts';
import { injectApi } from './mta-inject.ts';
import { measured, startSvcNode, type SvcNodes, type SvcSetup } from './mta-svc.ts';
import { databaseCost, type DatabaseCost } from './mta-wal.ts';

export const SECOND_WORKER_EHLO = 'mta2.bench.example';
const shippedDefault = DEFAULT_PROVIDERS.find((provider) => provider.key === 'default')!;

export interface NodesFigures {
  nodes: number;
  oneNode: { messagesPerSecond: number } | null;
  twoNodes: {
    messagesPerSecond: number;
    ratioToOneNode: number | null;
    exactlyOnce: boolean;
    byNode: Record<string, number>;
    maxConnectionsPerMx: number;
    maxMessagesPerConnection: number;
    limitsHeld: boolean;
    database: DatabaseCost | null;
  };
  kill: {
    messagesPerSecond: number;
    everyMessageArrived: boolean;
    duplicates: number;
    heldAtKill: number;
    duplicatesWithinHeld: boolean;
    /** From the kill to the last row the killed node held leaving the spool. */
    takenOverSeconds: number | null;
    maxConnectionsPerMx: number;
    limitsHeld: boolean;
  };
}

const limitsHeld = (column: ColumnFigures) =>
  column.maxConnectionsPerMx <= shippedDefault.maxConnections &&
  column.maxMessagesPerConnection <= shippedDefault.maxMessagesPerConnection;

async function rowsLeasedBy(sequelize: Sequelize, pid: number): Promise<string[]> {
  const rows = await sequelize.query<{ id: string }>(
    `SELECT id::text AS id FROM mta_spool WHERE state = 'leased' AND lease_owner LIKE :owner`,
    { replacements: { owner: `%:${pid}:%` }, type: QueryTypes.SELECT },
  );
  return rows.map((row) => row.id);
}

async function stillSpooled(sequelize: Sequelize, ids: string[]): Promise<boolean> {
  if (ids.length === 0) return false;
  const [row] = await sequelize.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM mta_spool WHERE id::text IN (:ids)`,
    { replacements: { ids }, type: QueryTypes.SELECT },
  );
  return row.n > 0;
}

/** Waits until both worker nodes are registered: each MTA loop then divides the figures by 2 (NOTIFY). */
async function bothRegistered(sequelize: Sequelize): Promise<void> {
  for (;;) {
    const [row] = await sequelize.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM daemon_nodes WHERE role IN ('worker', 'all')`,
      { type: QueryTypes.SELECT },
    );
    if (row.n >= 2) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function twoNodeColumns(
  count: number,
  nodes: SvcNodes,
  oneNode: ColumnFigures | null,
  sinks: SinksClient,
  setup: SvcSetup,
  sequelize: Sequelize,
  stallMs: number,
): Promise<{ columns: ColumnFigures[]; figures: NodesFigures }> {
  const start = () => startSvcNode(setup, 'worker', { EHLO_NAME: SECOND_WORKER_EHLO });
  const second: Child = await start();
  await bothRegistered(sequelize);
  const busy = () => [nodes.api, nodes.worker, second];
  const run = (label: string, prefix: string, during?: Parameters<typeof measured>[8]) =>
    measured(
      label,
      count,
      busy(),
      sinks,
      setup,
      sequelize,
      stallMs,
      () => injectApi(nodes.url, setup.apiKey, prefix, count),
      during,
    );
  setup.log('svc, 2 worker nodes: a warm-up of the second node (not measured)');
  await measured('svc, 2 nodes warm-up', Math.min(500, count), busy(), sinks, setup, sequelize, stallMs, () =>
    injectApi(nodes.url, setup.apiKey, 'x', Math.min(500, count)),
  );
  const cost = await databaseCost(sequelize);
  const together = await run('svc, 2 worker nodes', 'n');
  const database = await cost.done(together.messages);

  // The second node killed once a third of the run has arrived.
  let killedAt = 0;
  let held: string[] = [];
  let takenOverSeconds: number | null = null;
  let killing: Promise<void> | null = null;
  const killed = await run('svc, 2 nodes, one killed mid-run', 'k', (stats) => {
    if (killing || stats.unique < count / 3) return;
    const pid = second.process.pid!;
    second.process.kill('SIGKILL');
    killedAt = Date.now();
    setup.log(`  killed the second worker node (pid ${pid}) at ${stats.unique} received`);
    killing = (async () => {
      await second.exited;
      held = await rowsLeasedBy(sequelize, pid);
      setup.log(`  it held ${held.length} spool rows`);
      // Taken over once their lease ran out, delivered and gone from the spool.
      while (await stillSpooled(sequelize, held)) await new Promise((resolve) => setTimeout(resolve, 250));
      takenOverSeconds = Math.round((Date.now() - killedAt) / 100) / 10;
    })();
  });
  await killing;

  const figures: NodesFigures = {
    nodes: 2,
    oneNode: oneNode ? { messagesPerSecond: oneNode.messagesPerSecond } : null,
    twoNodes: {
      messagesPerSecond: together.messagesPerSecond,
      ratioToOneNode: oneNode ? Math.round((together.messagesPerSecond / oneNode.messagesPerSecond) * 100) / 100 : null,
      exactlyOnce: together.messages === count && together.duplicates === 0,
      byNode: together.byHelo,
      maxConnectionsPerMx: together.maxConnectionsPerMx,
      maxMessagesPerConnection: together.maxMessagesPerConnection,
      limitsHeld: limitsHeld(together),
      database,
    },
    kill: {
      messagesPerSecond: killed.messagesPerSecond,
      everyMessageArrived: killed.messages === count,
      duplicates: killed.duplicates,
      heldAtKill: held.length,
      duplicatesWithinHeld: killed.duplicates <= held.length,
      takenOverSeconds,
      maxConnectionsPerMx: killed.maxConnectionsPerMx,
      limitsHeld: limitsHeld(killed),
    },
  };
  return { columns: [together, killed], figures };
}

/** The two-node lines of bench:mta's goals. */
export function nodeGoals(figures: NodesFigures): { goal: string; met: boolean | null; figure: string }[] {
  const { twoNodes, kill } = figures;
  return [
    {
      goal: '2 worker nodes: each message delivered exactly once',
      met: twoNodes.exactlyOnce,
      figure: `${twoNodes.messagesPerSecond} msg/s (${twoNodes.ratioToOneNode ?? '–'}× one node), per node ${JSON.stringify(twoNodes.byNode)}`,
    },
    {
      goal: `2 worker nodes: ≤ ${shippedDefault.maxConnections} connections per MX host and ≤ ${shippedDefault.maxMessagesPerConnection} messages per connection together`,
      met: twoNodes.limitsHeld && kill.limitsHeld,
      figure: `${twoNodes.maxConnectionsPerMx} and ${twoNodes.maxMessagesPerConnection} (killed run: ${kill.maxConnectionsPerMx})`,
    },
    {
      goal: 'one node killed mid-run: every message delivered, duplicates ≤ what it held',
      met: kill.everyMessageArrived && kill.duplicatesWithinHeld,
      figure: `${kill.duplicates} duplicates, ${kill.heldAtKill} rows held; its rows done ${kill.takenOverSeconds ?? '–'} s after the kill`,
    },
  ];
}
