// Captured system mail: the rows of captured_messages that belong to no tenant and no send (the system-mail
// worker captures them so when no relay is configured). Newest first.
import { QueryTypes, type Sequelize } from 'sequelize';

export interface CapturedSystemMailRow {
  id: string;
  messageId: string;
  from: string | null;
  to: string[];
  subject: string | null;
  createdAt: Date;
}

const SYSTEM_MAIL = `tenant_id IS NULL AND email_id IS NULL`;
const TO_FILTER = `AND (CAST(:to AS text) IS NULL OR lower(:to) = ANY (SELECT lower(unnest(envelope_to))))`;
const COLUMNS = `id, message_id AS "messageId", envelope_from AS "from", envelope_to AS "to", subject, created_at AS "createdAt"`;

export async function listCapturedSystemMail(
  sequelize: Sequelize,
  filter: { to: string | null; limit: number; offset: number },
): Promise<{ rows: CapturedSystemMailRow[]; total: number }> {
  const replacements = { to: filter.to, limit: filter.limit, offset: filter.offset };
  const [rows, counted] = await Promise.all([
    sequelize.query<CapturedSystemMailRow>(
      `SELECT ${COLUMNS} FROM captured_messages WHERE ${SYSTEM_MAIL} ${TO_FILTER}
        ORDER BY created_at DESC, id LIMIT :limit OFFSET :offset`,
      { replacements, type: QueryTypes.SELECT },
    ),
    sequelize.query<{ n: string }>(`SELECT count(*) AS n FROM captured_messages WHERE ${SYSTEM_MAIL} ${TO_FILTER}`, {
      replacements,
      type: QueryTypes.SELECT,
    }),
  ]);
  return { rows, total: Number(counted[0]?.n ?? 0) };
}

export async function findCapturedSystemMail(
  sequelize: Sequelize,
  id: string,
): Promise<(CapturedSystemMailRow & { raw: string }) | null> {
  const rows = await sequelize.query<CapturedSystemMailRow & { raw: string }>(
    `SELECT ${COLUMNS}, raw FROM captured_messages WHERE ${SYSTEM_MAIL} AND id = :id LIMIT 1`,
    { replacements: { id }, type: QueryTypes.SELECT },
  );
  return rows[0] ?? null;
}
