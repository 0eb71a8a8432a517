// The SQL of a tenant's token address on the platform inbound domain (issue 52).
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

export interface InboundAddressRow {
  tenant_id: string;
  token: string;
  rotated_at: Date | null;
}

/** The tenant's token, created with `token` when it has none yet (two first reads agree on one). */
export async function ensureAddressRow(
  sequelize: Sequelize,
  tenantId: string,
  token: string,
): Promise<InboundAddressRow> {
  const [row] = await sequelize.query<InboundAddressRow>(
    `WITH inserted AS (
       INSERT INTO inbound_addresses (tenant_id, token) VALUES (:tenantId, :token)
       ON CONFLICT (tenant_id) DO NOTHING RETURNING tenant_id, token, rotated_at)
     SELECT * FROM inserted
     UNION ALL SELECT tenant_id, token, rotated_at FROM inbound_addresses WHERE tenant_id = :tenantId
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
    `SELECT tenant_id, token, rotated_at FROM inbound_addresses WHERE tenant_id = :tenantId FOR UPDATE`,
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
     RETURNING tenant_id, token, rotated_at`,
    { type: QueryTypes.SELECT, replacements: { tenantId, token }, transaction },
  );
  return row;
}
