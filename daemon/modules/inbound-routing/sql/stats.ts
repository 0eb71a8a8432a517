// The counts of GET /inbound/stats (issue 52 §4: the dashboard's inbound volume): the tenant's messages
// of the longer window ($2, 7 days) by route and status, over inbound_messages_tenant_idx (tenant_id,
// created_at); the shorter window ($3, 24 h) is a FILTER of the same rows. The failing endpoints are
// webhook deliveries' SQL, in their home (webhooks/sql/inbound-failures.ts).
import type { Sequelize } from 'sequelize';
import { declare, sequelizeRows } from '../../../db/sql.ts';
import type { InboundMessageStatus, InboundRoute } from '../../../../shared/schemas/inbound.ts';

const COUNTS = declare(
  'inbound.stats-counts',
  `SELECT m.route_id, r.match_address, r.action, m.status,
          count(*) FILTER (WHERE m.created_at >= $3)::int AS last_24h,
          count(*)::int AS last_7d
     FROM inbound_messages m
     LEFT JOIN inbound_routes r ON r.id = m.route_id AND r.tenant_id = m.tenant_id
    WHERE m.tenant_id = $1 AND m.created_at >= $2
    GROUP BY m.route_id, r.match_address, r.action, m.status`,
);

export interface StatusCountRow {
  route_id: string | null;
  match_address: string | null;
  action: InboundRoute['action'] | null;
  status: InboundMessageStatus;
  last_24h: number;
  last_7d: number;
}

export function statusCounts(
  sequelize: Sequelize,
  tenantId: string,
  window: { since7d: Date; since24h: Date },
): Promise<StatusCountRow[]> {
  return sequelizeRows<StatusCountRow>(sequelize, COUNTS, [tenantId, window.since7d, window.since24h]);
}
