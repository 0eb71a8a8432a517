// System mail captured on the embedded default (no SMTP_URL): password resets, verifications, invitations and
// notices, readable by platform admins (GET /platform/system-mail, `svc platform mail`).
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, PageQuery, Timestamp, Uuid } from './common.ts';

export const SystemMailQuery = Type.Intersect([
  PageQuery(),
  Type.Object({
    to: Type.Optional(Type.String({ maxLength: 320, description: 'only messages to this address (any case)' })),
  }),
]);
export type SystemMailQuery = Static<typeof SystemMailQuery>;

export const SystemMailSummary = Type.Object({
  id: Uuid,
  messageId: Type.String(),
  from: Nullable(Type.String()),
  to: Type.Array(Type.String()),
  subject: Nullable(Type.String()),
  createdAt: Timestamp,
});
export type SystemMailSummary = Static<typeof SystemMailSummary>;

export const SystemMailMessage = Type.Composite([
  SystemMailSummary,
  Type.Object({
    raw: Type.String({ description: 'the whole message as captured (RFC 5322, DKIM-signed when set up)' }),
  }),
]);
export type SystemMailMessage = Static<typeof SystemMailMessage>;
