// The maintenance worker's task: scheduled campaigns whose sendAt has passed are sent as if their
// creator pressed send. claimForSending makes two workers on two daemons unable to send one twice.
import type { MaintenanceTask, WorkerContext } from '../../queue/types.ts';
import { dueCampaigns } from './model.ts';
import { sendCampaign } from './send.ts';

const CAMPAIGNS_PER_TICK = 5;

export async function dispatchDueCampaigns(ctx: WorkerContext): Promise<void> {
  for (const campaign of await dueCampaigns(CAMPAIGNS_PER_TICK)) {
    const tenant = {
      tenantId: campaign.tenantId,
      adminId: campaign.createdBy ?? null,
      apiKeyId: null,
      role: null,
      isPlatformAdmin: false,
      testMode: campaign.testMode,
    };
    try {
      await sendCampaign(ctx, tenant, campaign.id, { from: campaign.fromAddress ?? '' });
    } catch (error) {
      // sendCampaign keeps the sentence on the campaign (lastError); a campaign with nothing accepted
      // stays SCHEDULED and is tried again next tick (e.g. once the quota cycle resets).
      ctx.log.warn({ campaignId: campaign.id, tenantId: campaign.tenantId, err: error }, 'scheduled campaign could not be sent');
    }
  }
}

export const dispatchDueCampaignsTask: MaintenanceTask = { name: 'dispatch-due-campaigns', everyMs: 30_000, run: dispatchDueCampaigns };
