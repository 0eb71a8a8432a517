// The SQL of a tenant's token address on the platform inbound domain, and of its reply-address
// setting (issue 52).
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { declare, type Sql } from '../../../db/sql.ts';

export interface InboundAddressRow {
  tenant_id: string;
  token: string;
  rotated_at: Date | null;
  reply_addresses: boolean;
}

const COLUMNS = 'tenant_id, token, rotated_at, reply_addresses';

/** The tenant's token, created with `token` when it has none yet (two first reads agree on one). */
export async function ensureAddressRow(
  sequelize: Sequelize,
  tenantId: string,
  token: string,
): Promise<InboundAddressRow> {
  const [row] = await sequelize.query<InboundAddressRow>(
    `WITH inserted AS (
       INSERT INTO inbound_addresses (tenant_id, token) VALUES (:tenantId, :token)
       ON CONFLICT (tenant_id) DO NOTHING RETURNING ${COLUMNS})
     SELECT * FROM inserted
     UNION ALL SELECT ${COLUMNS} FROM inbound_addresses WHERE tenant_id = :tenantId
     LIMIT 1`,
    { type: QueryTypes.SELECT, replacements: { tenantId, token } },
  );
  return row;
}

export async function lockAddressRow(
  sequelize: Sequelize,
  tenantId: string,
  transaction: Transaction,
): Promise<InboundAddressRow | null> {
  const [row] = await sequelize.query<InboundAddressRow>(
    `SELECT ${COLUMNS} FROM inbound_addresses WHERE tenant_id = :tenantId FOR UPDATE`,
    { type: QueryTypes.SELECT, replacements: { tenantId }, transaction },
  );
  return row ?? null;
}

export async function setToken(
  sequelize: Sequelize,
  tenantId: string,
  token: string,
  transaction: Transaction,
): Promise<InboundAddressRow> {
  const [row] = await sequelize.query<InboundAddressRow>(
    `UPDATE inbound_addresses SET token = :token, rotated_at = now() WHERE tenant_id = :tenantId
     RETURNING ${COLUMNS}`,
    { type: QueryTypes.SELECT, replacements: { tenantId, token }, transaction },
  );
  return row;
}

/** Turns the tenant's reply addresses on or off; null when it has no address row yet. */
export async function setReplyAddresses(
  sequelize: Sequelize,
  tenantId: string,
  on: boolean,
): Promise<InboundAddressRow | null> {
  const [row] = await sequelize.query<InboundAddressRow>(
    `UPDATE inbound_addresses SET reply_addresses = :on WHERE tenant_id = :tenantId RETURNING ${COLUMNS}`,
    { type: QueryTypes.SELECT, replacements: { tenantId, on } },
  );
  return row ?? null;
}

const REPLY_ADDRESSES_ON = declare(
  'inbound.reply-addresses-on',
  `SELECT reply_addresses FROM inbound_addresses WHERE tenant_id = $1`,
);

/** Whether the tenant's sends carry a reply address (the send path asks, through its per-thread cache). */
export async function replyAddressesOn(sql: Sql, tenantId: string): Promise<boolean> {
  const [row] = await sql.rows<{ reply_addresses: boolean }>(REPLY_ADDRESSES_ON, [tenantId]);
  return row?.reply_addresses ?? false;
}

/**
 * The token and plan of an active tenant whose reply addresses are on (a reply address of its send is
 * then received as its token address); null when they are off, it has no token or it is blocked.
 */
export async function replyReceivingTenant(
  sequelize: Sequelize,
  tenantId: string,
): Promise<{ token: string; plan: string } | null> {
  const [row] = await sequelize.query<{ token: string; plan: string }>(
    `SELECT a.token, t.plan FROM inbound_addresses a JOIN tenants t ON t.id = a.tenant_id
      WHERE a.tenant_id = :tenantId AND a.reply_addresses AND t.status = 'active'`,
    { type: QueryTypes.SELECT, replacements: { tenantId } },
  );
  return row ?? null;
}
