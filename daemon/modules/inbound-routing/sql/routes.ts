// The SQL of inbound routes (issue 52): a tenant's routes in order, and what RCPT TO needs to decide
// one recipient. Every statement is filtered by tenant, except the RCPT look-ups, which find the
// tenant from the domain (a verified inbound domain) or the token address.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

export interface InboundRouteRow {
  id: string;
  tenant_id: string;
  position: number;
  match_address: string;
  action: 'webhook' | 'forward' | 'store' | 'refuse';
  endpoint_id: string | null;
  forward_to: string | null;
  refuse_message: string | null;
  enabled: boolean;
  description: string | null;
  max_inline_attachment_bytes: number;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `id, tenant_id, position, match_address, action, endpoint_id, forward_to, refuse_message, enabled,
  description, max_inline_attachment_bytes, created_at, updated_at`;

export async function listRouteRows(
  sequelize: Sequelize,
  tenantId: string,
  page: { limit: number; offset: number },
): Promise<{ rows: InboundRouteRow[]; total: number }> {
  const rows = await sequelize.query<InboundRouteRow & { total: string }>(
    `SELECT ${COLUMNS}, count(*) OVER () AS total FROM inbound_routes WHERE tenant_id = :tenantId
      ORDER BY position, created_at, id LIMIT :limit OFFSET :offset`,
    { type: QueryTypes.SELECT, replacements: { tenantId, ...page } },
  );
  return { rows, total: rows.length ? Number(rows[0].total) : 0 };
}

export async function countRoutes(sequelize: Sequelize, tenantId: string, transaction?: Transaction): Promise<number> {
  const [row] = await sequelize.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM inbound_routes WHERE tenant_id = :tenantId`,
    { type: QueryTypes.SELECT, replacements: { tenantId }, transaction },
  );
  return row.n;
}

export async function routeRow(
  sequelize: Sequelize,
  tenantId: string,
  id: string,
  transaction?: Transaction,
): Promise<InboundRouteRow | null> {
  const [row] = await sequelize.query<InboundRouteRow>(
    `SELECT ${COLUMNS} FROM inbound_routes WHERE tenant_id = :tenantId AND id = :id`,
    { type: QueryTypes.SELECT, replacements: { tenantId, id }, transaction },
  );
  return row ?? null;
}

export type RouteFields = Pick<
  InboundRouteRow,
  | 'match_address'
  | 'action'
  | 'endpoint_id'
  | 'forward_to'
  | 'refuse_message'
  | 'enabled'
  | 'description'
  | 'max_inline_attachment_bytes'
> & { position: number | null };

export async function insertRoute(
  sequelize: Sequelize,
  tenantId: string,
  fields: RouteFields,
  transaction?: Transaction,
): Promise<InboundRouteRow> {
  const [row] = await sequelize.query<InboundRouteRow>(
    `INSERT INTO inbound_routes (tenant_id, position, match_address, action, endpoint_id, forward_to, refuse_message,
                                 enabled, description, max_inline_attachment_bytes)
     VALUES (:tenantId,
             COALESCE(:position, (SELECT COALESCE(max(position) + 10, 0) FROM inbound_routes WHERE tenant_id = :tenantId)),
             :match_address, :action, :endpoint_id, :forward_to, :refuse_message, :enabled, :description,
             :max_inline_attachment_bytes)
     RETURNING ${COLUMNS}`,
    { type: QueryTypes.SELECT, replacements: { tenantId, ...fields }, transaction },
  );
  return row;
}

export async function updateRoute(
  sequelize: Sequelize,
  tenantId: string,
  id: string,
  fields: RouteFields & { position: number },
  transaction?: Transaction,
): Promise<InboundRouteRow | null> {
  const [row] = await sequelize.query<InboundRouteRow>(
    `UPDATE inbound_routes
        SET position = :position, match_address = :match_address, action = :action, endpoint_id = :endpoint_id,
            forward_to = :forward_to, refuse_message = :refuse_message, enabled = :enabled, description = :description,
            max_inline_attachment_bytes = :max_inline_attachment_bytes, updated_at = now()
      WHERE tenant_id = :tenantId AND id = :id
     RETURNING ${COLUMNS}`,
    { type: QueryTypes.SELECT, replacements: { tenantId, id, ...fields }, transaction },
  );
  return row ?? null;
}

export async function deleteRoute(sequelize: Sequelize, tenantId: string, id: string): Promise<boolean> {
  const rows = await sequelize.query<{ id: string }>(
    `DELETE FROM inbound_routes WHERE tenant_id = :tenantId AND id = :id RETURNING id`,
    { type: QueryTypes.SELECT, replacements: { tenantId, id } },
  );
  return rows.length > 0;
}

/** Moves the routes of a token address to the new token (rotation), in the rotation's transaction. */
export async function renameTokenRoutes(
  sequelize: Sequelize,
  tenantId: string,
  change: { oldLocal: string; newLocal: string; domain: string },
  transaction: Transaction,
): Promise<void> {
  await sequelize.query(
    `UPDATE inbound_routes
        SET match_address = :newLocal || substr(match_address, length(:oldLocal) + 1), updated_at = now()
      WHERE tenant_id = :tenantId AND lower(split_part(match_address, '@', 2)) = :domain
        AND (lower(split_part(match_address, '@', 1)) = :oldLocal OR lower(split_part(match_address, '@', 1)) = :oldLocal || '+*')`,
    { replacements: { tenantId, ...change }, transaction },
  );
}

/** The tenant that receives at a domain (its verified inbound domain), with its plan; null when none. */
export interface RoutingTenant {
  tenant_id: string;
  plan: string;
  status: 'active' | 'blocked';
}

export async function tenantOfInboundDomain(sequelize: Sequelize, domain: string): Promise<RoutingTenant | null> {
  const [row] = await sequelize.query<RoutingTenant>(
    `SELECT d.tenant_id, t.plan, t.status FROM inbound_domains d JOIN tenants t ON t.id = d.tenant_id
      WHERE d.name = :domain AND d.status = 'verified'`,
    { type: QueryTypes.SELECT, replacements: { domain } },
  );
  return row ?? null;
}

export async function tenantOfToken(sequelize: Sequelize, token: string): Promise<RoutingTenant | null> {
  const [row] = await sequelize.query<RoutingTenant>(
    `SELECT a.tenant_id, t.plan, t.status FROM inbound_addresses a JOIN tenants t ON t.id = a.tenant_id
      WHERE a.token = :token`,
    { type: QueryTypes.SELECT, replacements: { token } },
  );
  return row ?? null;
}

/** The enabled routes of a tenant at one domain, in the order they are tried. */
export async function routesAtDomain(
  sequelize: Sequelize,
  tenantId: string,
  domain: string,
): Promise<InboundRouteRow[]> {
  return sequelize.query<InboundRouteRow>(
    `SELECT ${COLUMNS} FROM inbound_routes
      WHERE tenant_id = :tenantId AND enabled AND lower(split_part(match_address, '@', 2)) = :domain
      ORDER BY position, created_at, id`,
    { type: QueryTypes.SELECT, replacements: { tenantId, domain } },
  );
}

/** The tenant's webhook endpoint, when it is the tenant's. */
export async function endpointOfTenant(sequelize: Sequelize, tenantId: string, endpointId: string): Promise<boolean> {
  const rows = await sequelize.query<{ id: string }>(
    `SELECT id FROM webhook_endpoints WHERE tenant_id = :tenantId AND id = :endpointId`,
    { type: QueryTypes.SELECT, replacements: { tenantId, endpointId } },
  );
  return rows.length > 0;
}
