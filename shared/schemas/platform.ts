// Platform-wide settings (platform admins only): GET/PATCH /platform/settings.
import { Type, type Static } from '@sinclair/typebox';
import { EmailAddress, Nullable } from './common.ts';

const Hostname = Type.String({
  pattern: '^(?=.{1,253}$)([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\\.)+[a-zA-Z]{2,63}$',
  description: 'a DNS name',
});

const Rate = (description: string) => Type.Number({ minimum: 0, maximum: 1, description });

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
  // TLS-RPT (RFC 8460 §4.4): who the daily reports to other domains say they come from.
  tlsReportOrganization: Nullable(Type.String({ minLength: 1, maxLength: 200 }), {
    description:
      'organization-name of the TLS reports this platform sends; null: the platform domain (PUBLIC_URL), else the EHLO name',
  }),
  tlsReportContact: Nullable(Type.String({ minLength: 1, maxLength: 320, pattern: '^(mailto:|https://)\\S+$' }), {
    description: 'contact-info of the TLS reports (a mailto: or https:// URI); null: mailto: the system sender',
  }),
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
  // Sending risk (daemon/modules/emails/sending-risk.ts): a warning, then a pause, on evidence only.
  complaintRateWarn: Rate('complaints (distinct recipients) per send at which the tenant is warned'),
  complaintRatePause: Rate('complaints (distinct recipients) per send at which sending is paused'),
  hardBounceRateWarn: Rate('hard bounces (distinct recipients) per send at which the tenant is warned'),
  hardBounceRatePause: Rate('hard bounces (distinct recipients) per send at which sending is paused'),
  riskMinSends: Type.Integer({
    minimum: 1,
    maximum: 10_000,
    description: 'sends the window must hold before a rate is judged at all (warning or pause)',
  }),
  riskMinComplaints: Type.Integer({
    minimum: 1,
    maximum: 10_000,
    description: 'complaints from distinct recipients needed before a complaint rate pauses',
  }),
  riskMinHardBounces: Type.Integer({
    minimum: 1,
    maximum: 10_000,
    description: 'hard bounces from distinct recipients needed before a bounce rate pauses',
  }),
  // Invitations mail addresses that have no account (modules/tenants/invitation-limits.ts): caps a real
  // team never meets, so a new account cannot use the platform's signed mail to reach strangers in bulk.
  invitationsPerTenantPerDay: Type.Integer({
    minimum: 1,
    maximum: 1_000_000,
    description: 'invitation mails one tenant may send in any 24 hours (then 429 with Retry-After)',
  }),
  invitationsPerPlatformPerDay: Type.Integer({
    minimum: 1,
    maximum: 10_000_000,
    description: 'invitation mails all tenants together may send in any 24 hours (then 429 with Retry-After)',
  }),
  feedbackLoopDomains: Type.Array(Hostname, {
    maxItems: 500,
    uniqueItems: true,
    description:
      'DKIM signing domains (and their subdomains) whose ARF reports at fbl@ count as complaints; others are kept as unverified',
  }),
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
  tlsReportOrganization: null,
  tlsReportContact: null,
  // Postal keeps 60 days of metadata and 30 of raw messages; hosted services 30–45 days.
  logRetentionDays: 60,
  bodyRetentionDays: 30,
  rawMessageRetentionDays: 30,
  eventRetentionDays: 60,
  webhookDeliveryRetentionDays: 30,
  // Gmail and Yahoo's sender rules: stay under 0.1 % spam, never reach 0.3 %; SES reviews at 5 %
  // bounces and pauses at 10 %.
  complaintRateWarn: 0.001,
  complaintRatePause: 0.003,
  hardBounceRateWarn: 0.05,
  hardBounceRatePause: 0.1,
  riskMinSends: 1000,
  riskMinComplaints: 3,
  riskMinHardBounces: 10,
  invitationsPerTenantPerDay: 50,
  invitationsPerPlatformPerDay: 1000,
  // The reporting domains of the large mailbox providers' feedback loops (Yahoo/AOL CFL, Microsoft
  // JMRP/SNDS, Comcast and the others run by Validity, Mail.ru, Yandex, Fastmail, Zoho, GMX/WEB.DE…).
  feedbackLoopDomains: [
    'yahoo.com',
    'yahoo-inc.com',
    'aol.com',
    'hotmail.com',
    'outlook.com',
    'microsoft.com',
    'comcast.net',
    'returnpath.net',
    'validity.com',
    'mail.ru',
    'yandex.ru',
    'yandex.net',
    'fastmail.com',
    'messagingengine.com',
    'zoho.com',
    'gmx.net',
    'web.de',
    'att.net',
    'cox.net',
    'rackspace.com',
    'seznam.cz',
    'libero.it',
  ],
};
