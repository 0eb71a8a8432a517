// Scheduled sends: the send body plus sendAt and an IANA timezone.
import { Type, type Static } from '@sinclair/typebox';
import { SCHEDULED_STATUSES } from '../constants.ts';
import { Paged, PageQuery, Timestamp, Uuid, Nullable, OneOf } from './common.ts';
import { SendEmailBody } from './emails.ts';

export const DEFAULT_SCHEDULE_TIMEZONE = 'Europe/Madrid';

export const ScheduleEmailBody = Type.Composite(
  [
    SendEmailBody,
    Type.Object({
      sendAt: Type.String({
        minLength: 10,
        maxLength: 40,
        description: 'ISO 8601; without an offset it is read in `timezone`',
      }),
      timezone: Type.Optional(
        Type.String({ minLength: 1, maxLength: 64, description: 'IANA timezone, default Europe/Madrid' }),
      ),
    }),
  ],
  { additionalProperties: false },
);
export type ScheduleEmailBody = Static<typeof ScheduleEmailBody>;

export const ScheduledStatus = OneOf(SCHEDULED_STATUSES);

export const ScheduledEmail = Type.Object({
  id: Uuid,
  tenantId: Uuid,
  status: ScheduledStatus,
  sendAt: Timestamp,
  timezone: Type.String(),
  payload: Type.Record(Type.String(), Type.Unknown()),
  emailId: Nullable(Uuid),
  error: Nullable(Type.String()),
  createdAt: Timestamp,
});
export type ScheduledEmail = Static<typeof ScheduledEmail>;

export const ScheduledQuery = Type.Intersect([PageQuery(), Type.Object({ status: Type.Optional(ScheduledStatus) })]);
export type ScheduledQuery = Static<typeof ScheduledQuery>;
export const ScheduledPage = Paged(ScheduledEmail);
