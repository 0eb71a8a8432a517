// Taking back a campaign's queued sends (campaigns/cancel.ts): in one statement, in the cancel's
// transaction, their send jobs are deleted unless a worker has leased them (those are already being
// delivered and are left alone), their logs become CANCELLED, and the quota they took is given back,
// each to the cycle it was counted in (the newest counter row that started before its log was
// written); test sends were never counted. The logs are found through the tenant/status index from
// the moment the send started (a minute earlier, against clock skew between daemon and database).
import type { Sequelize, Transaction } from 'sequelize';
import { declare, sequelizeRows } from '../../../db/sql.ts';

/** $1 tenant, $2 campaign id, $3 started at, $4 send job key prefix, $5 the logs' error. */
const CANCEL_QUEUED_CAMPAIGN_SENDS = declare(
  'emails.cancel-queued-campaign-sends',
  `
  WITH taken AS (
    DELETE FROM jobs j USING email_logs l
     WHERE l.tenant_id = $1::uuid AND l.status = 'QUEUED' AND l.created_at >= $3::timestamptz - interval '1 minute'
       AND l.metadata->>'campaignId' = $2::text
       AND j.queue = 'send' AND j.key = $4::text || l.id::text AND j.locked_until IS NULL
     RETURNING l.id
  ), marked AS (
    UPDATE email_logs SET status = 'CANCELLED', error = $5::text, updated_at = now()
     WHERE id IN (SELECT id FROM taken) AND status = 'QUEUED'
     RETURNING id, created_at, test_mode
  ), refunded AS (
    UPDATE quota_usage q SET used = GREATEST(0, q.used - r.n)
      FROM (SELECT (SELECT max(u.cycle_start) FROM quota_usage u WHERE u.tenant_id = $1::uuid AND u.cycle_start <= m.created_at) AS cycle_start,
                   count(*)::int AS n
              FROM marked m WHERE NOT m.test_mode GROUP BY 1) r
     WHERE q.tenant_id = $1::uuid AND q.cycle_start = r.cycle_start AND q.shard = 0
  )
  SELECT count(*)::int AS n FROM marked`,
);

/** Answers how many sends were taken back. */
export async function cancelQueuedCampaignSends(
  sequelize: Sequelize,
  input: { tenantId: string; campaignId: string; startedAt: Date; jobKeyPrefix: string; error: string },
  transaction: Transaction,
): Promise<number> {
  const [row] = await sequelizeRows<{ n: number }>(
    sequelize,
    CANCEL_QUEUED_CAMPAIGN_SENDS,
    [input.tenantId, input.campaignId, input.startedAt, input.jobKeyPrefix, input.error],
    transaction,
  );
  return row.n;
}
