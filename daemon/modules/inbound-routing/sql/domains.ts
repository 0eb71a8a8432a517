// The SQL of a tenant's inbound domains (issue 52): added pending, verified by their MX.
import { QueryTypes, type Sequelize } from 'sequelize';

export interface InboundDomainRow {
  id: string;
  tenant_id: string;
  name: string;
  status: 'pending' | 'verified';
  mx_found: string[];
  explanation: string | null;
  checked_at: Date | null;
  verified_at: Date | null;
  created_at: Date;
}

const COLUMNS = 'id, tenant_id, name, status, mx_found, explanation, checked_at, verified_at, created_at';

export async function insertDomain(
  sequelize: Sequelize,
  tenantId: string,
  name: string,
): Promise<InboundDomainRow | null> {
  const [row] = await sequelize.query<InboundDomainRow>(
    `INSERT INTO inbound_domains (tenant_id, name) VALUES (:tenantId, :name)
     ON CONFLICT (tenant_id, name) DO NOTHING RETURNING ${COLUMNS}`,
    { type: QueryTypes.SELECT, replacements: { tenantId, name } },
  );
  return row ?? null;
}

export async function listDomains(
  sequelize: Sequelize,
  tenantId: string,
  page: { limit: number; offset: number },
): Promise<{ rows: InboundDomainRow[]; total: number }> {
  const rows = await sequelize.query<InboundDomainRow & { total: string }>(
    `SELECT ${COLUMNS}, count(*) OVER () AS total FROM inbound_domains WHERE tenant_id = :tenantId
      ORDER BY name LIMIT :limit OFFSET :offset`,
    { type: QueryTypes.SELECT, replacements: { tenantId, ...page } },
  );
  return { rows, total: rows.length ? Number(rows[0].total) : 0 };
}

export async function domainRow(sequelize: Sequelize, tenantId: string, id: string): Promise<InboundDomainRow | null> {
  const [row] = await sequelize.query<InboundDomainRow>(
    `SELECT ${COLUMNS} FROM inbound_domains WHERE tenant_id = :tenantId AND id = :id`,
    { type: QueryTypes.SELECT, replacements: { tenantId, id } },
  );
  return row ?? null;
}

/** The tenant's domain by name (a route's domain must be one of them). */
export async function domainByName(
  sequelize: Sequelize,
  tenantId: string,
  name: string,
): Promise<InboundDomainRow | null> {
  const [row] = await sequelize.query<InboundDomainRow>(
    `SELECT ${COLUMNS} FROM inbound_domains WHERE tenant_id = :tenantId AND name = :name`,
    { type: QueryTypes.SELECT, replacements: { tenantId, name } },
  );
  return row ?? null;
}

/** Records a check; `verified` fails (unique index) when another tenant already verified the name. */
export async function recordCheck(
  sequelize: Sequelize,
  tenantId: string,
  id: string,
  check: { verified: boolean; mxFound: string[]; explanation: string | null },
): Promise<InboundDomainRow | null> {
  const [row] = await sequelize.query<InboundDomainRow>(
    `UPDATE inbound_domains
        SET status = CASE WHEN :verified THEN 'verified' ELSE 'pending' END,
            verified_at = CASE WHEN :verified THEN COALESCE(verified_at, now()) ELSE NULL END,
            mx_found = ARRAY(SELECT jsonb_array_elements_text(CAST(:mxFound AS jsonb))), explanation = :explanation, checked_at = now()
      WHERE tenant_id = :tenantId AND id = :id
     RETURNING ${COLUMNS}`,
    {
      type: QueryTypes.SELECT,
      replacements: {
        tenantId,
        id,
        verified: check.verified,
        mxFound: JSON.stringify(check.mxFound),
        explanation: check.explanation,
      },
    },
  );
  return row ?? null;
}

export async function deleteDomain(sequelize: Sequelize, tenantId: string, id: string): Promise<boolean> {
  const rows = await sequelize.query<{ id: string }>(
    `DELETE FROM inbound_domains WHERE tenant_id = :tenantId AND id = :id RETURNING id`,
    { type: QueryTypes.SELECT, replacements: { tenantId, id } },
  );
  return rows.length > 0;
}
