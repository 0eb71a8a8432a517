// Endpoints failing at inbound.received (GET /inbound/stats, issue 52 §4): the tenant's deliveries of
// that event since $2 per endpoint, over the partial index webhook_deliveries_inbound_idx (migration
// 0475; without it the tenant's every outbound webhook delivery of the window is read too). The event
// type is written in the statement, not bound, so the planner always matches that index's predicate.
// An endpoint is failing when its latest outcome (an attempt, or a skip because it was off) left an
// error: SETTLE (delivery-store.ts) writes each attempt's error, none on success.
import type { Sequelize } from 'sequelize';
import { declare, sequelizeRows } from '../../../db/sql.ts';

const FAILING_INBOUND_ENDPOINTS = declare(
  'webhook_deliveries_failing_inbound_endpoints',
  `WITH outcomes AS (
     SELECT d.endpoint_id, d.status, d.error, COALESCE(d.delivered_at, d.updated_at) AS at
       FROM webhook_deliveries d
      WHERE d.tenant_id = $1 AND d.event_type = 'inbound.received' AND d.created_at >= $2
        AND (d.delivered_at IS NOT NULL OR d.status = 'skipped')
   ), per_endpoint AS (
     SELECT endpoint_id,
            count(*) FILTER (WHERE status IN ('failed', 'skipped'))::int AS failed,
            count(*) FILTER (WHERE status = 'pending' AND error IS NOT NULL)::int AS retrying,
            (array_agg(error ORDER BY at DESC))[1] AS latest_error,
            max(at) FILTER (WHERE error IS NOT NULL) AS last_failed_at
       FROM outcomes GROUP BY endpoint_id
   )
   SELECT p.endpoint_id, e.url, e.enabled, e.consecutive_failures, p.failed, p.retrying,
          p.latest_error AS last_error, p.last_failed_at
     FROM per_endpoint p JOIN webhook_endpoints e ON e.id = p.endpoint_id AND e.tenant_id = $1
    WHERE p.latest_error IS NOT NULL
    ORDER BY p.last_failed_at DESC, p.endpoint_id
    LIMIT $3`,
);

export interface FailingEndpointRow {
  endpoint_id: string;
  url: string;
  enabled: boolean;
  consecutive_failures: number;
  failed: number;
  retrying: number;
  last_error: string;
  last_failed_at: Date;
}

/** At most `limit` endpoints, the latest failure first. */
export function failingInboundEndpoints(
  sequelize: Sequelize,
  tenantId: string,
  since: Date,
  limit: number,
): Promise<FailingEndpointRow[]> {
  return sequelizeRows<FailingEndpointRow>(sequelize, FAILING_INBOUND_ENDPOINTS, [tenantId, since, limit]);
}
