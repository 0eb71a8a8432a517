// Cancelling a campaign: a DRAFT or SCHEDULED one simply becomes CANCELLED; a SENDING one also
// stops its expansion and takes back the sends it queued that no worker has picked up yet.
//
// Once the status is CANCELLED no further chunk commits: a chunk writes its sends and position only
// while the campaign is SENDING (compare-and-set in the same transaction, chunk.ts), so the chunk in
// flight writes nothing and the job, reading CANCELLED, ends. The queued sends are taken back in the
// same transaction (emails/sql/cancel-queued.ts): their send jobs are deleted unless a worker has leased them (those are already
// being delivered and are left alone), and their logs become CANCELLED. The quota those sends took is given back: each one to the cycle it
// was counted in (the newest counter row that started before its log was written), test sends not,
// since they were never counted. The campaign row is locked before the counter row, in the order a
// chunk takes them (chunk.ts), so a cancel and a chunk cannot deadlock.
import { QueryTypes } from 'sequelize';
import { ConflictError } from '../../errors.ts';
import type { TenantContext } from '../../context.ts';
import { removeJob } from '../../queue/enqueue.ts';
import { sendJobKey } from '../emails/service.ts';
import { cancelQueuedCampaignSends } from '../emails/sql/cancel-queued.ts';
import type { Campaign } from '../../../shared/schemas/campaigns.ts';
import { campaignJobKey } from './send.ts';
import { findCampaign, toCampaign, type CampaignDeps } from './service.ts';

export const CANCELLED_SEND_ERROR = 'the campaign was cancelled before this message was sent';

export async function cancelCampaign(deps: CampaignDeps, ctx: TenantContext, input: { id: string }): Promise<Campaign> {
  const { sequelize } = deps.db;
  const campaign = await findCampaign(deps, ctx.tenantId, input.id);
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
        ? await cancelQueuedCampaignSends(
            sequelize,
            {
              tenantId: ctx.tenantId,
              campaignId: campaign.id,
              startedAt: row.started_at,
              jobKeyPrefix: sendJobKey(''),
              error: CANCELLED_SEND_ERROR,
            },
            transaction,
          )
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
