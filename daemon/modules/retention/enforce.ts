// The retention task (maintenance worker, hourly). For each history table:
//  1. partitions exist for this month and MONTHS_AHEAD months ahead (inserts never reach the default);
//  2. month partitions wholly past the platform horizon are dropped: no dead rows, no vacuum debt;
//  3. rows past the horizon that remain (the month straddling it, the default partition) and the
//     rows of tenants with a shorter override go by batched deletes of BATCH rows, each its own short
//     statement, at most MAX_BATCHES per table and run so one run never holds the database for long;
//  4. rows of the plain tables that age with a history horizon (AGED_TABLES) go the same way;
// and the bodies of logs past the bodies horizon are removed in batches the same way.
import { QueryTypes, type Sequelize } from 'sequelize';
import {
  dropPartitionsBefore,
  ensurePartitions,
  INBOUND_PARTITIONED_TABLES,
  PARTITIONED_TABLES,
  type PartitionedTable,
} from '../../db/partitions.ts';
import { getPlatformSettings } from '../../db/platform-settings.ts';
import { allOverrides, platformPolicy, type Overrides } from './service.ts';
import { agedRowsSql, expiredHistoryRowsSql } from '../../db/expiry.ts';
import { deleteExpiredLogsSql, removeBodiesSql } from '../emails/sql/retention.ts';
import { deleteAgedOutcomesSql } from '../emails/sql/recipient-outcomes.ts';
import { deleteExpiredDeliveriesSql } from '../webhooks/sql/deliveries.ts';
import { deleteExpiredInboundMessagesSql } from '../inbound-routing/sql/retention.ts';
import type { RetentionKind, RetentionPolicy } from '../../../shared/schemas/retention.ts';
import type { WorkerContext } from '../../mail/worker-context.ts';

export const RETENTION_BATCH = 5000;
const MAX_BATCHES = 100;
const DAY_MS = 24 * 60 * 60_000;

/** Which horizon each table follows (a log's timeline goes with the log). */
export const TABLE_HORIZON: Record<PartitionedTable, RetentionKind> = {
  email_logs: 'logsDays',
  email_events: 'logsDays',
  captured_messages: 'rawMessagesDays',
  events: 'eventsDays',
  webhook_deliveries: 'webhookDeliveriesDays',
  // The raw source of a received message, kept like a captured one.
  inbound_messages: 'rawMessagesDays',
};

/**
 * Tables outside the partitioned history whose rows age with one of its horizons: the bounce and
 * complaint reports kept without effect (anyone can send them to the inbound port, so they must not
 * pile up for ever) and the per-recipient outcomes of sends (a report for a send whose log is gone
 * can no longer match it), and the daily warm-up counts per source address (only today's are read; a
 * pool's addresses and providers add a row each a day for as long as it sends). `received_at`/
 * `created_at`/`day` is when each row was written.
 */
const AGED_TABLES = [
  { table: 'inbound_reports', column: 'received_at', kind: 'eventsDays', perTenant: false },
  { table: 'recipient_outcomes', column: 'created_at', kind: 'logsDays', perTenant: true },
  { table: 'ip_warmup_counts', column: 'day', kind: 'logsDays', perTenant: false },
] as const;

/** The batched delete of an aged table's rows: a hot table's is its home's (test/sql-homes.test.ts). */
function agedDeleteStatement(table: (typeof AGED_TABLES)[number]['table'], where: string): string {
  return table === 'recipient_outcomes' ? deleteAgedOutcomesSql(where) : agedRowsSql(table, where);
}

export interface RetentionReport {
  partitionsCreated: string[];
  partitionsDropped: string[];
  rowsDeleted: Record<string, number>;
  bodiesRemoved: number;
}

/** Runs `statement` (which must touch at most RETENTION_BATCH rows) until it touches fewer. */
async function inBatches(
  sequelize: Sequelize,
  statement: string,
  replacements: Record<string, unknown>,
): Promise<number> {
  let total = 0;
  for (let i = 0; i < MAX_BATCHES; i += 1) {
    const rows = await sequelize.query<{ id: string }>(statement, {
      type: QueryTypes.SELECT,
      replacements: { ...replacements, batch: RETENTION_BATCH },
    });
    total += rows.length;
    if (rows.length < RETENTION_BATCH) break;
  }
  return total;
}

/**
 * The batched delete of a history table's rows matching `where`, answering their ids. A hot table's is
 * its home's (test/sql-homes.test.ts): a log goes with its tags there.
 */
function deleteStatement(table: PartitionedTable, where: string): string {
  switch (table) {
    case 'email_logs':
      return deleteExpiredLogsSql(where);
    case 'webhook_deliveries':
      return deleteExpiredDeliveriesSql(where);
    case 'inbound_messages':
      // A received message's stored attachments (MONTHLY_COMPANIONS) go with it there.
      return deleteExpiredInboundMessagesSql(where);
    case 'email_events':
    case 'captured_messages':
    case 'events':
      return `${expiredHistoryRowsSql(table, where)} RETURNING id`;
  }
}

/** Tenants whose override of `kind` is shorter than the platform's, with their horizon. */
function shorter(
  overrides: Map<string, Overrides>,
  platform: RetentionPolicy,
  kind: RetentionKind,
): [string, number][] {
  return [...overrides].flatMap(([tenantId, o]): [string, number][] =>
    o[kind] !== null && o[kind] < platform[kind] ? [[tenantId, o[kind]]] : [],
  );
}

export async function enforceRetention(sequelize: Sequelize, now = new Date()): Promise<RetentionReport> {
  const platform = platformPolicy(await getPlatformSettings(sequelize));
  const overrides = await allOverrides(sequelize);
  const cutoff = (days: number) => new Date(now.getTime() - days * DAY_MS);
  const report: RetentionReport = { partitionsCreated: [], partitionsDropped: [], rowsDeleted: {}, bodiesRemoved: 0 };

  for (const table of [...PARTITIONED_TABLES, ...INBOUND_PARTITIONED_TABLES]) {
    const kind = TABLE_HORIZON[table];
    report.partitionsCreated.push(...(await ensurePartitions(sequelize, table, now)));
    report.partitionsDropped.push(...(await dropPartitionsBefore(sequelize, table, cutoff(platform[kind]))));
    let deleted = await inBatches(sequelize, deleteStatement(table, 'created_at < :cutoff'), {
      cutoff: cutoff(platform[kind]),
    });
    for (const [tenantId, days] of shorter(overrides, platform, kind)) {
      deleted += await inBatches(sequelize, deleteStatement(table, 'tenant_id = :tenantId AND created_at < :cutoff'), {
        tenantId,
        cutoff: cutoff(days),
      });
    }
    report.rowsDeleted[table] = deleted;
  }

  for (const aged of AGED_TABLES) {
    let deleted = await inBatches(sequelize, agedDeleteStatement(aged.table, `${aged.column} < :cutoff`), {
      cutoff: cutoff(platform[aged.kind]),
    });
    for (const [tenantId, days] of aged.perTenant ? shorter(overrides, platform, aged.kind) : []) {
      deleted += await inBatches(
        sequelize,
        agedDeleteStatement(aged.table, `tenant_id = :tenantId AND ${aged.column} < :cutoff`),
        { tenantId, cutoff: cutoff(days) },
      );
    }
    report.rowsDeleted[aged.table] = deleted;
  }

  report.bodiesRemoved = await inBatches(sequelize, removeBodiesSql('created_at < :cutoff'), {
    cutoff: cutoff(platform.bodiesDays),
  });
  for (const [tenantId, days] of shorter(overrides, platform, 'bodiesDays')) {
    report.bodiesRemoved += await inBatches(
      sequelize,
      removeBodiesSql('tenant_id = :tenantId AND created_at < :cutoff'),
      { tenantId, cutoff: cutoff(days) },
    );
  }
  return report;
}

/** The maintenance task: enforces, and logs what it did when it did anything. */
export async function retentionTask(ctx: WorkerContext): Promise<void> {
  const report = await enforceRetention(ctx.sequelize);
  const deleted = Object.values(report.rowsDeleted).reduce((sum, n) => sum + n, 0);
  if (report.partitionsCreated.length || report.partitionsDropped.length || deleted || report.bodiesRemoved)
    ctx.log.info(report, 'retention enforced');
}
