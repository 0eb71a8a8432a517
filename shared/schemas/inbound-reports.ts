// Bounce and complaint reports kept without effect (platform admins): GET /platform/inbound-reports.
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, OneOf, PageQuery, Paged, Timestamp, Uuid } from './common.ts';

export const KEPT_REPORT_DISPOSITIONS = ['unmatched', 'unverified'] as const;
export type KeptReportDisposition = (typeof KEPT_REPORT_DISPOSITIONS)[number];

export const KeptReportDispositionSchema = OneOf(KEPT_REPORT_DISPOSITIONS, {
  description:
    'unmatched: names no recipient the send went to (or no send of ours); unverified: an ARF at fbl@ without a valid DKIM signature of a listed feedback-loop operator',
});

export const KeptReportsQuery = Type.Intersect([
  PageQuery(100, 20),
  Type.Object({ disposition: Type.Optional(KeptReportDispositionSchema) }),
]);
export type KeptReportsQuery = Static<typeof KeptReportsQuery>;

export const KeptReportBody = Type.Object({
  id: Uuid,
  disposition: KeptReportDispositionSchema,
  kind: Type.Union([Type.Literal('bounce'), Type.Literal('complaint')]),
  source: Type.String({ description: 'smtp (the inbound port), ses, smtp-dsn' }),
  reason: Type.String({ description: 'why the report changed nothing' }),
  tenantId: Nullable(Uuid),
  emailId: Nullable(Uuid),
  reporter: Nullable(Type.String({ description: 'the envelope sender, or the DKIM domain that signed it' })),
  recipients: Type.Array(Type.String(), { description: 'the recipients the report named' }),
  messageIds: Type.Array(Type.String()),
  receivedAt: Timestamp,
});
export type KeptReportBody = Static<typeof KeptReportBody>;

export const KeptReportsPage = Paged(KeptReportBody);
