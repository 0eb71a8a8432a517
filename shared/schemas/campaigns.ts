// Campaigns: one template sent to an audience of opted-in contacts.
import { Type, type Static } from '@sinclair/typebox';
import { CAMPAIGN_STATUSES } from '../constants.ts';
import { PageLimit, PageMeta, PageNumber, Timestamp, Uuid, Nullable } from './common.ts';
import { Locale, TagName } from './contacts.ts';

// Spelled out (not mapped from CAMPAIGN_STATUSES) so the route types infer the literal union.
export const CampaignStatus = Type.Union([
  Type.Literal('DRAFT'),
  Type.Literal('SCHEDULED'),
  Type.Literal('SENDING'),
  Type.Literal('SENT'),
  Type.Literal('CANCELLED'),
]);
export type CampaignStatusName = (typeof CAMPAIGN_STATUSES)[number];

export const Audience = Type.Object(
  {
    tag: Type.Optional(TagName),
    locale: Type.Optional(Locale),
    projectId: Type.Optional(Uuid),
  },
  {
    additionalProperties: false,
    description: 'opted-in contacts matching every given filter; {} means every opted-in contact',
  },
);
export type Audience = Static<typeof Audience>;

export const CreateCampaignBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    templateId: Uuid,
    audience: Audience,
    sendAt: Type.Optional(
      Type.String({ format: 'date-time', description: 'a future time: the campaign is SCHEDULED; without it, DRAFT' }),
    ),
    from: Type.Optional(
      Type.String({
        minLength: 3,
        maxLength: 320,
        description: 'sender; required with sendAt, since nobody is there to give it when the time comes',
      }),
    ),
  },
  { additionalProperties: false, description: 'CreateCampaignDto' },
);
export type CreateCampaignBody = Static<typeof CreateCampaignBody>;

export const Campaign = Type.Object({
  id: Uuid,
  name: Type.String(),
  templateId: Uuid,
  audience: Audience,
  status: CampaignStatus,
  sendAt: Nullable(Timestamp),
  cancelledAt: Nullable(Timestamp),
  sentAt: Nullable(Timestamp),
  from: Nullable(Type.String(), { description: 'the sender of the send, once started' }),
  accepted: Type.Integer({ description: 'messages the send pipeline accepted' }),
  rejected: Type.Integer({ description: 'recipients refused (suppressed, no published version for their locale …)' }),
  cancelledSends: Type.Integer({
    description: 'queued sends a cancel took back before a worker picked them up (their logs are CANCELLED)',
  }),
  total: Nullable(Type.Integer(), {
    description: 'opted-in contacts the audience matched when the send started; null before',
  }),
  remaining: Nullable(Type.Integer(), {
    description:
      'contacts the expansion has not reached yet (total − accepted − rejected; an estimate while the audience changes mid-send); 0 once SENT or CANCELLED, null before the send',
  }),
  startedAt: Nullable(Timestamp, { description: 'when the send was started (by request or by the schedule)' }),
  lastError: Nullable(Type.String(), { description: 'why a send stopped part-way (e.g. the monthly quota)' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Campaign = Static<typeof Campaign>;

export const CampaignDetail = Type.Composite([
  Campaign,
  Type.Object({ audienceSize: Type.Integer({ description: 'opted-in contacts the audience matches now' }) }),
]);
export type CampaignDetail = Static<typeof CampaignDetail>;

export const CampaignListQuery = Type.Object(
  {
    status: Type.Optional(CampaignStatus),
    page: Type.Optional(PageNumber),
    limit: Type.Optional(PageLimit()),
  },
  { additionalProperties: false },
);
export type CampaignListQuery = Static<typeof CampaignListQuery>;

export const CampaignPage = Type.Object({ data: Type.Array(Campaign), meta: PageMeta });

export const LocaleCoverage = Type.Object({
  locale: Type.String({
    description: "the contacts' locale; contacts without one count under the template's default locale",
  }),
  contacts: Type.Integer(),
  hasPublishedVersion: Type.Boolean({ description: 'the template has a published version in exactly this locale' }),
  fallbackLocale: Nullable(Type.String(), {
    description:
      'without an exact version, the published locale a send would use (the language, then the default); null when none',
  }),
});
export const LocaleCoverageList = Type.Array(LocaleCoverage);
export type LocaleCoverage = Static<typeof LocaleCoverage>;

export const SendCampaignBody = Type.Object(
  {
    from: Type.String({
      minLength: 3,
      maxLength: 320,
      description: 'sender, e.g. "Acme <news@acme.example>"; on a verified domain when mail leaves',
    }),
  },
  { additionalProperties: false },
);
export type SendCampaignBody = Static<typeof SendCampaignBody>;
