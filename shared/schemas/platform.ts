// Platform-wide settings (platform admins only): GET/PATCH /platform/settings.
import { Type, type Static } from '@sinclair/typebox';
import { EmailAddress, Nullable } from './common.ts';

const Hostname = Type.String({
  pattern: '^(?=.{1,253}$)([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\\.)+[a-zA-Z]{2,63}$',
  description: 'a DNS name',
});

// Null first in each union: with type coercion on, a null tried against a string branch first becomes "".
export const PlatformSettingsBody = Type.Object({
  registrationOpen: Type.Boolean({ description: 'false: only the first admin (when there is none) may register' }),
  defaultFromAddress: Nullable(EmailAddress, {
    description: 'platform-wide default From address, read by the send pipeline when a tenant has none',
  }),
  trackOpensByDefault: Type.Boolean(),
  trackClicksByDefault: Type.Boolean(),
  spfInclude: Nullable(Hostname, { description: 'the SPF include: domain tenants are told to publish' }),
  returnPathDomain: Nullable(Hostname, { description: 'the bounce (Return-Path) domain tenants CNAME to' }),
  // Retention (days; see shared/schemas/retention.ts): tenants may shorten, never lengthen.
  logRetentionDays: Type.Integer({
    minimum: 1,
    maximum: 3650,
    description: 'email logs and their timeline; expired a month partition at a time',
  }),
  bodyRetentionDays: Type.Integer({
    minimum: 1,
    maximum: 3650,
    description: 'HTML/text bodies of logs (nulled before the log itself goes)',
  }),
  rawMessageRetentionDays: Type.Integer({ minimum: 1, maximum: 3650, description: 'raw captured messages' }),
  eventRetentionDays: Type.Integer({ minimum: 1, maximum: 3650, description: 'the event outbox' }),
  webhookDeliveryRetentionDays: Type.Integer({ minimum: 1, maximum: 3650, description: 'webhook deliveries' }),
});
export type PlatformSettings = Static<typeof PlatformSettingsBody>;

export const UpdatePlatformSettingsBody = Type.Partial(PlatformSettingsBody, {
  additionalProperties: false,
  minProperties: 1,
});
export type UpdatePlatformSettings = Static<typeof UpdatePlatformSettingsBody>;

export const DEFAULT_PLATFORM_SETTINGS: PlatformSettings = {
  registrationOpen: true,
  defaultFromAddress: null,
  trackOpensByDefault: false,
  trackClicksByDefault: false,
  spfInclude: null,
  returnPathDomain: null,
  // Postal keeps 60 days of metadata and 30 of raw messages; hosted services 30–45 days.
  logRetentionDays: 60,
  bodyRetentionDays: 30,
  rawMessageRetentionDays: 30,
  eventRetentionDays: 60,
  webhookDeliveryRetentionDays: 30,
};
