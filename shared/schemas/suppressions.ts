// Suppressions: addresses a tenant does not send to.
import { Type, type Static } from '@sinclair/typebox';
import { SUPPRESSION_REASONS } from '../constants.ts';
import { EmailAddress, Paged, PageQuery, Timestamp, Uuid, Nullable, OneOf } from './common.ts';

export const SuppressionReason = OneOf(SUPPRESSION_REASONS);

export const CreateSuppressionBody = Type.Object(
  { email: EmailAddress, reason: SuppressionReason },
  { additionalProperties: false, description: 'CreateSuppressionDto' },
);
export type CreateSuppressionBody = Static<typeof CreateSuppressionBody>;

export const Suppression = Type.Object({
  id: Uuid,
  email: Type.String(),
  reason: SuppressionReason,
  emailId: Nullable(Uuid),
  detail: Nullable(Type.String()),
  createdAt: Timestamp,
});
export type Suppression = Static<typeof Suppression>;

export const SuppressionsQuery = Type.Intersect([
  PageQuery(),
  Type.Object({ email: Type.Optional(EmailAddress), reason: Type.Optional(SuppressionReason) }),
]);
export type SuppressionsQuery = Static<typeof SuppressionsQuery>;
export const SuppressionsPage = Paged(Suppression);

export const DeleteSuppressionQuery = Type.Object({ email: EmailAddress });
