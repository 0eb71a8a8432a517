// Per-tenant delivery throttles (tables mta_tenant_throttles, mta_tenant_hourly; migrations 0383,
// 0384) and the facts the MTA loop divides per-node limits by: throttles, paused tenants, live nodes.
import { declare, type Sql } from '../../db/sql.ts';
import { SHAPING_CHANNEL } from './providers.ts';

export interface TenantThrottle {
  tenantId: string;
  messagesPerSecond: number | null;
  messagesPerHour: number | null;
}

const LIST_THROTTLES = declare(
  'mta_throttles_list',
  `SELECT tenant_id::text AS tenant_id, messages_per_second, messages_per_hour FROM mta_tenant_throttles`,
);

const GET_THROTTLE = declare(
  'mta_throttle_get',
  `SELECT tenant_id::text AS tenant_id, messages_per_second, messages_per_hour FROM mta_tenant_throttles WHERE tenant_id = $1`,
);

const SET_THROTTLE = declare(
  'mta_throttle_set',
  `
  WITH saved AS (
    INSERT INTO mta_tenant_throttles (tenant_id, messages_per_second, messages_per_hour) VALUES ($1, $2, $3)
    ON CONFLICT (tenant_id) DO UPDATE
       SET messages_per_second = EXCLUDED.messages_per_second, messages_per_hour = EXCLUDED.messages_per_hour, updated_at = now()
    RETURNING tenant_id
  )
  SELECT tenant_id::text AS tenant_id, pg_notify('${SHAPING_CHANNEL}', '')::text AS notified FROM saved`,
);

const CLEAR_THROTTLE = declare(
  'mta_throttle_clear',
  `
  WITH removed AS (DELETE FROM mta_tenant_throttles WHERE tenant_id = $1 RETURNING tenant_id)
  SELECT (SELECT count(*) FROM removed)::int AS removed, pg_notify('${SHAPING_CHANNEL}', '')::text AS notified`,
);

// Paused tenants' rows are not attempted: a pause (sending risk, or a reaction) stops their mail in
// the spool as it stops new sends at the API.
const PAUSED_TENANTS = declare(
  'mta_paused_tenants',
  `SELECT id::text AS id FROM tenants WHERE sending_paused_at IS NOT NULL`,
);

// Counts one message in the tenant's current clock hour, unless the hour is full: exact across nodes.
const TAKE_HOURLY = declare(
  'mta_hourly_take',
  `
  INSERT INTO mta_tenant_hourly (tenant_id, hour, sent) VALUES ($1, floor(extract(epoch FROM now()) / 3600)::bigint, 1)
  ON CONFLICT (tenant_id, hour) DO UPDATE SET sent = mta_tenant_hourly.sent + 1 WHERE mta_tenant_hourly.sent < $2
  RETURNING sent`,
);

const HOUR_NOW = declare('mta_hour_now', `SELECT floor(extract(epoch FROM now()) / 3600)::bigint::text AS hour`);

const PRUNE_HOURLY = declare(
  'mta_hourly_prune',
  `DELETE FROM mta_tenant_hourly WHERE hour < floor(extract(epoch FROM now()) / 3600)::bigint - 2`,
);

const LIVE_WORKER_NODES = declare(
  'mta_live_worker_nodes',
  `SELECT count(*)::int AS nodes FROM daemon_nodes
    WHERE role IN ('worker', 'all') AND delivery IS DISTINCT FROM 'relay'
      AND last_seen_at > now() - $1::int * interval '1 millisecond'`,
);

interface ThrottleRow {
  tenant_id: string;
  messages_per_second: number | null;
  messages_per_hour: number | null;
}

const throttleOf = (row: ThrottleRow): TenantThrottle => ({
  tenantId: row.tenant_id,
  messagesPerSecond: row.messages_per_second,
  messagesPerHour: row.messages_per_hour,
});

export async function loadTenantThrottles(sql: Sql): Promise<TenantThrottle[]> {
  return (await sql.rows<ThrottleRow>(LIST_THROTTLES, [])).map(throttleOf);
}

export async function getTenantThrottle(sql: Sql, tenantId: string): Promise<TenantThrottle> {
  const [row] = await sql.rows<ThrottleRow>(GET_THROTTLE, [tenantId]);
  return row ? throttleOf(row) : { tenantId, messagesPerSecond: null, messagesPerHour: null };
}

/** Sets a tenant's throttle (both null: none) and tells the loops. */
export async function setTenantThrottle(sql: Sql, throttle: TenantThrottle): Promise<void> {
  if (throttle.messagesPerSecond === null && throttle.messagesPerHour === null) {
    await sql.rows(CLEAR_THROTTLE, [throttle.tenantId]);
    return;
  }
  await sql.rows(SET_THROTTLE, [throttle.tenantId, throttle.messagesPerSecond, throttle.messagesPerHour]);
}

export async function loadPausedTenants(sql: Sql): Promise<string[]> {
  return (await sql.rows<{ id: string }>(PAUSED_TENANTS, [])).map((row) => row.id);
}

/**
 * Counts a message toward the tenant's hour; answers null when it fits, else when the next hour
 * starts (by the database's clock, as epoch ms).
 */
export async function takeHourlySlot(sql: Sql, tenantId: string, perHour: number): Promise<number | null> {
  const rows = await sql.rows(TAKE_HOURLY, [tenantId, perHour]);
  if (rows.length > 0) return null;
  const [{ hour }] = await sql.rows<{ hour: string }>(HOUR_NOW, []);
  return (Number(hour) + 1) * 3_600_000;
}

export async function pruneHourlyCounts(sql: Sql): Promise<void> {
  await sql.count(PRUNE_HOURLY, []);
}

/** Worker nodes that run the MTA (not a relaying one), seen within `seenWithinMs` (at least 1: this one). */
export async function liveWorkerNodes(sql: Sql, seenWithinMs: number): Promise<number> {
  const [row] = await sql.rows<{ nodes: number }>(LIVE_WORKER_NODES, [seenWithinMs]);
  return Math.max(1, row?.nodes ?? 1);
}
