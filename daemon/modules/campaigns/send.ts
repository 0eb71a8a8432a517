// Starting a campaign send: POST /campaigns/{id}/send, and a scheduled campaign when its time has
// come (dispatch.ts). Only what can be checked at once is checked here (the sender, the template);
// the campaign is claimed (DRAFT or SCHEDULED → SENDING) and its expansion job enqueued in ONE
// transaction, and the request answers. The audience is expanded by the campaign worker (expand.ts):
// a crash between the claim and the job is impossible, and a crash after it only delays the job.
import { ConflictError, UnprocessableError, errorText } from '../../errors.ts';
import type { TenantContext } from '../../context.ts';
import { enqueueJob } from '../../queue/enqueue.ts';
import { normalizeSend } from '../emails/validate.ts';
import { countContacts } from '../contacts/model.ts';
import type { Campaign, SendCampaignBody } from '../../../shared/schemas/campaigns.ts';
import { claimForSending, templateSlug } from './model.ts';
import { audienceFilter, findCampaign, toCampaign, type CampaignDeps } from './service.ts';

/** One expansion job per campaign (the queue refuses a second one with the same key). */
export const campaignJobKey = (campaignId: string): string => `campaign:${campaignId}`;
/** A campaign refused part-way (quota, pause) is retried for about two days before its job gives up. */
export const CAMPAIGN_JOB_MAX_ATTEMPTS = 50;

export interface StartOptions {
  /** Null keeps the test mode the campaign was created with (the scheduler has no key of its own). */
  testMode: boolean | null;
}

export async function startCampaignSend(
  deps: CampaignDeps,
  ctx: TenantContext,
  input: { id: string; body: SendCampaignBody } & StartOptions,
): Promise<Campaign> {
  const { sequelize } = deps.db;
  const { body } = input;
  const campaign = await findCampaign(deps, ctx.tenantId, input.id);
  try {
    // The pipeline's own sender check, with a well-formed stand-in message so that only `from` can fail.
    normalizeSend({ from: body.from, to: 'recipient@example.com', subject: '-', textBody: '-' });
  } catch (error) {
    if (campaign.status === 'DRAFT' || campaign.status === 'SCHEDULED') {
      campaign.set({ lastError: errorText(error) });
      await campaign.save();
    }
    throw error;
  }
  if (!(await templateSlug(sequelize, ctx.tenantId, campaign.templateId))) {
    throw new UnprocessableError("The campaign's template no longer exists.", 'TEMPLATE_NOT_FOUND');
  }
  const audienceTotal = await countContacts(sequelize, audienceFilter(ctx.tenantId, campaign.audience ?? {}));
  const claimed = await sequelize.transaction(async (transaction) => {
    const claim = {
      tenantId: ctx.tenantId,
      id: campaign.id,
      fromAddress: body.from,
      apiKeyId: ctx.apiKeyId,
      testMode: input.testMode,
      audienceTotal,
    };
    if (!(await claimForSending(sequelize, claim, transaction))) return false;
    await enqueueJob(
      sequelize,
      {
        queue: 'campaign',
        tenantId: ctx.tenantId,
        payload: { campaignId: campaign.id, tenantId: ctx.tenantId },
        key: campaignJobKey(campaign.id),
        maxAttempts: CAMPAIGN_JOB_MAX_ATTEMPTS,
      },
      transaction,
    );
    return true;
  });
  if (!claimed) {
    await campaign.reload();
    throw new ConflictError(
      `The campaign is ${campaign.status}; only DRAFT or SCHEDULED campaigns can be sent.`,
      'CAMPAIGN_NOT_SENDABLE',
    );
  }
  await campaign.reload();
  return toCampaign(campaign);
}
