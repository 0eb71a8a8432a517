// Sending a campaign: every opted-in contact of the audience gets the template's published version
// for their locale (language, then default locale, as send-template resolves it), through the send
// pipeline's one entry, acceptSends, 100 recipients per call. Each call carries an idempotency key
// of the campaign and chunk, so the pipeline's own replay rule guards against double acceptance.
import type { Sequelize } from 'sequelize';
import { ConflictError, UnprocessableError } from '../../errors.ts';
import type { TenantContext } from '../../plugins/access.ts';
import { acceptSends, type SendDeps } from '../emails/service.ts';
import { normalizeSend, type NormalizedSend } from '../emails/validate.ts';
import { resolvePublishedVersion, type PublishedVersion } from '../templates/render.ts';
import { findContactsAfterId, type ContactRow } from '../contacts/model.ts';
import type { BatchAccepted } from '../../../shared/schemas/emails.ts';
import type { Campaign, SendCampaignBody } from '../../../shared/schemas/campaigns.ts';
import { claimForSending, templateSlug } from './model.ts';
import { audienceFilter, findCampaign, toCampaign } from './service.ts';

const RECIPIENTS_PER_CALL = 100;

function templateData(contact: ContactRow): Record<string, unknown> {
  return {
    ...contact.attributes,
    contact: {
      email: contact.email,
      externalId: contact.externalId,
      firstName: contact.firstName,
      lastName: contact.lastName,
      locale: contact.locale,
      attributes: contact.attributes,
    },
  };
}

async function versionFor(sequelize: Sequelize, tenantId: string, slug: string, locale: string | null, cache: Map<string, PublishedVersion | null>) {
  const key = (locale ?? '').toLowerCase();
  if (!cache.has(key)) cache.set(key, await resolvePublishedVersion(sequelize, tenantId, slug, locale));
  return cache.get(key) ?? null;
}

export async function sendCampaign(deps: SendDeps, ctx: TenantContext, id: string, body: SendCampaignBody): Promise<Campaign> {
  const { sequelize } = deps;
  const campaign = await findCampaign(ctx.tenantId, id);
  const previousStatus = campaign.status;
  const slug = await templateSlug(sequelize, ctx.tenantId, campaign.templateId);
  if (!slug) throw new UnprocessableError('The campaign\'s template no longer exists.', 'TEMPLATE_NOT_FOUND');
  if (!(await claimForSending(sequelize, ctx.tenantId, campaign.id, body.from))) {
    throw new ConflictError(`The campaign is ${campaign.status}; only DRAFT or SCHEDULED campaigns can be sent.`, 'CAMPAIGN_NOT_SENDABLE');
  }
  await campaign.reload();
  const filter = audienceFilter(ctx.tenantId, campaign.audience ?? {});
  const versions = new Map<string, PublishedVersion | null>();
  let accepted = 0;
  let rejected = 0;
  let afterId: string | null = null;
  let chunk = 0;
  try {
    for (;;) {
      const contacts = await findContactsAfterId(sequelize, filter, afterId, RECIPIENTS_PER_CALL);
      if (contacts.length === 0) break;
      const sends: NormalizedSend[] = [];
      const refused: { to: string; reason: string }[] = [];
      for (const contact of contacts) {
        const version = await versionFor(sequelize, ctx.tenantId, slug, contact.locale ?? null, versions);
        if (!version) {
          refused.push({ to: contact.email, reason: `no published version for locale ${contact.locale ?? '(none)'} or the default locale` });
          continue;
        }
        sends.push(normalizeSend({
          from: body.from,
          to: contact.email,
          templateVersionId: version.id,
          locale: version.locale,
          data: templateData(contact),
          tags: ['campaign'],
          metadata: { campaignId: campaign.id },
          ...(contact.projectId ? { projectId: contact.projectId } : {}),
        }));
      }
      if (sends.length > 0) {
        const answer = await acceptSends(deps, ctx, sends, { shape: 'batch', idempotencyKey: `campaign:${campaign.id}:${chunk}`, rejected: refused });
        const result = answer.body as BatchAccepted;
        accepted += result.accepted.length;
        rejected += result.rejected.length;
      } else {
        rejected += refused.length;
      }
      chunk += 1;
      afterId = contacts[contacts.length - 1].id;
    }
  } catch (error) {
    // Nothing accepted yet: the campaign goes back to where it was. Otherwise it stays SENDING with the reason.
    campaign.set({
      status: accepted === 0 ? previousStatus : 'SENDING',
      acceptedCount: accepted,
      rejectedCount: rejected,
      lastError: error instanceof Error ? error.message : String(error),
    });
    await campaign.save();
    throw error;
  }
  campaign.set({ status: 'SENT', sentAt: new Date(), acceptedCount: accepted, rejectedCount: rejected });
  await campaign.save();
  return toCampaign(campaign);
}
