// Platform-wide settings (platform admins only): GET/PATCH /platform/settings.
import { Type, type Static } from '@sinclair/typebox';
import { EmailAddress } from './common.ts';

const Hostname = Type.String({ pattern: '^(?=.{1,253}$)([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\\.)+[a-zA-Z]{2,63}$', description: 'a DNS name' });

// Null first in each union: with type coercion on, a null tried against a string branch first becomes "".
export const PlatformSettingsBody = Type.Object({
  registrationOpen: Type.Boolean({ description: 'false: only the first admin (when there is none) may register' }),
  defaultFromAddress: Type.Union([Type.Null(), EmailAddress], { description: 'platform-wide default From address, read by the send pipeline when a tenant has none' }),
  trackOpensByDefault: Type.Boolean(),
  trackClicksByDefault: Type.Boolean(),
  spfInclude: Type.Union([Type.Null(), Hostname], { description: 'the SPF include: domain tenants are told to publish' }),
  returnPathDomain: Type.Union([Type.Null(), Hostname], { description: 'the bounce (Return-Path) domain tenants CNAME to' }),
});
export type PlatformSettings = Static<typeof PlatformSettingsBody>;

export const UpdatePlatformSettingsBody = Type.Partial(PlatformSettingsBody, { additionalProperties: false, minProperties: 1 });
export type UpdatePlatformSettings = Static<typeof UpdatePlatformSettingsBody>;

export const DEFAULT_PLATFORM_SETTINGS: PlatformSettings = {
  registrationOpen: true,
  defaultFromAddress: null,
  trackOpensByDefault: false,
  trackClicksByDefault: false,
  spfInclude: null,
  returnPathDomain: null,
};
