// The maintenance worker's task: scheduled campaigns whose sendAt has passed are started as if
// their creator pressed send (the same claim and expansion job as POST /campaigns/{id}/send).
// The claim makes two workers on two daemons unable to start one twice.
import { ApiError } from '../../errors.ts';
import type { MaintenanceTask, WorkerContext } from '../../mail/worker-context.ts';
import { dueCampaigns } from './model.ts';
import { startCampaignSend } from './send.ts';

const CAMPAIGNS_PER_TICK = 20;

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
      await startCampaignSend({ db: ctx }, tenant, {
        id: campaign.id,
        body: { from: campaign.fromAddress ?? '' },
        testMode: null,
      });
    } catch (error) {
      // Another dispatcher started it first (409), or the sender is refused (kept as lastError; the
      // campaign stays SCHEDULED and is tried again next tick).
      if (error instanceof ApiError && error.statusCode === 409) continue;
      ctx.log.warn(
        { campaignId: campaign.id, tenantId: campaign.tenantId, err: error },
        'scheduled campaign could not be started',
      );
    }
  }
}

export const dispatchDueCampaignsTask: MaintenanceTask = {
  name: 'dispatch-due-campaigns',
  everyMs: 30_000,
  run: dispatchDueCampaigns,
};
