// Cancelling a campaign: a DRAFT or SCHEDULED one simply becomes CANCELLED; a SENDING one also
// stops its expansion and takes back the sends it queued that no worker has picked up yet.
//
// Once the status is CANCELLED no further chunk commits: a chunk writes its sends and position only
// while the campaign is SENDING (compare-and-set in the same transaction, chunk.ts), so the chunk in
// flight writes nothing and the job, reading CANCELLED, ends. The queued sends are taken back in the
// same transaction: their send jobs are deleted unless a worker has leased them (those are already
// being delivered and are left alone), and their logs become CANCELLED. The quota those sends took is given back: each one to the cycle it
// was counted in (the newest counter row that started before its log was written), test sends not,
// since they were never counted. The campaign row is locked before the counter row, in the order a
// chunk takes them (chunk.ts), so a cancel and a chunk cannot deadlock.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { ConflictError } from '../../errors.ts';
import type { TenantContext } from '../../context.ts';
import { removeJob } from '../../queue/enqueue.ts';
import { sendJobKey } from '../emails/service.ts';
import type { Campaign } from '../../../shared/schemas/campaigns.ts';
import { campaignJobKey } from './send.ts';
import { findCampaign, toCampaign, type CampaignDeps } from './service.ts';

export const CANCELLED_SEND_ERROR = 'the campaign was cancelled before this message was sent';

/**
 * Answers how many were taken back. The campaign's logs are found through the tenant/status index
 * from the moment the send started (a minute earlier, against clock skew between the daemon and the
 * database).
 */
async function takeBackQueuedSends(
  sequelize: Sequelize,
  tenantId: string,
  campaignId: string,
  startedAt: Date,
  transaction: Transaction,
): Promise<number> {
  const [row] = await sequelize.query<{ n: number }>(
    `WITH taken AS (
       DELETE FROM jobs j USING email_logs l
        WHERE l.tenant_id = :tenantId AND l.status = 'QUEUED' AND l.created_at >= CAST(:startedAt AS timestamptz) - interval '1 minute'
          AND l.metadata->>'campaignId' = :campaignId
          AND j.queue = 'send' AND j.key = :keyPrefix || l.id::text AND j.locked_until IS NULL
        RETURNING l.id
     ), marked AS (
       UPDATE email_logs SET status = 'CANCELLED', error = :error, updated_at = now()
        WHERE id IN (SELECT id FROM taken) AND status = 'QUEUED'
        RETURNING id, created_at, test_mode
     ), refunded AS (
       UPDATE quota_usage q SET used = GREATEST(0, q.used - r.n)
         FROM (SELECT (SELECT max(u.cycle_start) FROM quota_usage u WHERE u.tenant_id = :tenantId AND u.cycle_start <= m.created_at) AS cycle_start,
                      count(*)::int AS n
                 FROM marked m WHERE NOT m.test_mode GROUP BY 1) r
        WHERE q.tenant_id = :tenantId AND q.cycle_start = r.cycle_start AND q.shard = 0
     )
     SELECT count(*)::int AS n FROM marked`,
    {
      replacements: { tenantId, campaignId, startedAt, keyPrefix: sendJobKey(''), error: CANCELLED_SEND_ERROR },
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  return row.n;
}

export async function cancelCampaign(deps: CampaignDeps, ctx: TenantContext, input: { id: string }): Promise<Campaign> {
  const { sequelize } = deps.db;
  const campaign = await findCampaign(ctx.tenantId, input.id);
  const cancelled = await sequelize.transaction(async (transaction) => {
    // Waits for a chunk committing right now (it updates this row), then reads the status it left.
    const [row] = await sequelize.query<{ status: string; started_at: Date | null }>(
      'SELECT status, started_at FROM campaigns WHERE id = :id AND tenant_id = :tenantId FOR UPDATE',
      { replacements: { id: campaign.id, tenantId: ctx.tenantId }, type: QueryTypes.SELECT, transaction },
    );
    if (!row || !['DRAFT', 'SCHEDULED', 'SENDING'].includes(row.status)) return false;
    await sequelize.query(
      `UPDATE campaigns SET status = 'CANCELLED', cancelled_at = now(), updated_at = now() WHERE id = :id`,
      {
        replacements: { id: campaign.id },
        transaction,
      },
    );
    if (row.status === 'SENDING') {
      await removeJob(sequelize, 'campaign', campaignJobKey(campaign.id), transaction);
      const taken = row.started_at
        ? await takeBackQueuedSends(sequelize, ctx.tenantId, campaign.id, row.started_at, transaction)
        : 0;
      await sequelize.query('UPDATE campaigns SET cancelled_count = :taken WHERE id = :id', {
        replacements: { taken, id: campaign.id },
        transaction,
      });
    }
    return true;
  });
  await campaign.reload();
  if (!cancelled) {
    throw new ConflictError(
      `The campaign is ${campaign.status}; only DRAFT, SCHEDULED or SENDING campaigns can be cancelled.`,
      'CAMPAIGN_NOT_CANCELLABLE',
    );
  }
  return toCampaign(campaign);
}
