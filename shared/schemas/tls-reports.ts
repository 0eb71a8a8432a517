// TLS-RPT reports this platform sends to other domains (RFC 8460; docs/mta.md "TLS reporting"): a day's
// report for one policy domain, previewed (GET) and sent again (POST) by platform admins.
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Timestamp } from './common.ts';

export const TlsReportParams = Type.Object({
  domain: Type.String({
    minLength: 1,
    maxLength: 253,
    pattern: '^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+\\.?$',
    description: 'the policy domain (a recipient domain mail was delivered to)',
  }),
  day: Type.String({
    pattern: '^\\d{4}-\\d{2}-\\d{2}$',
    description: 'the UTC day of the report, YYYY-MM-DD',
  }),
});
export type TlsReportParams = Static<typeof TlsReportParams>;

const FailureDetail = Type.Object({
  'result-type': Type.String(),
  'sending-mta-ip': Type.Optional(Type.String()),
  'receiving-mx-hostname': Type.Optional(Type.String()),
  'receiving-ip': Type.Optional(Type.String()),
  'failed-session-count': Type.Integer(),
});

/** RFC 8460 §4.4's aggregate report, as it is sent. */
export const TlsRptReportBody = Type.Object({
  'organization-name': Type.String(),
  'date-range': Type.Object({ 'start-datetime': Type.String(), 'end-datetime': Type.String() }),
  'contact-info': Type.String(),
  'report-id': Type.String(),
  policies: Type.Array(
    Type.Object({
      policy: Type.Object({
        'policy-type': Type.String(),
        'policy-string': Type.Optional(Type.Array(Type.String())),
        'policy-domain': Type.String(),
        'mx-host': Type.Optional(Type.Array(Type.String())),
      }),
      summary: Type.Object({
        'total-successful-session-count': Type.Integer(),
        'total-failure-session-count': Type.Integer(),
      }),
      'failure-details': Type.Optional(Type.Array(FailureDetail)),
    }),
  ),
});

export const TlsReportOutcome = Type.Object({
  uri: Type.String({ description: 'the rua address: https://… or mailto:…' }),
  ok: Type.Boolean(),
  detail: Type.String({ description: 'HTTP status, error, or the system mail job that carries it' }),
  tries: Type.Optional(Type.Integer()),
});

export const TlsReportPreviewBody = Type.Object({
  domain: Type.String(),
  day: Type.String(),
  report: TlsRptReportBody,
  rua: Type.Object(
    {
      https: Type.Array(Type.String()),
      mailto: Type.Array(Type.String()),
      answered: Type.Boolean({ description: 'false: the _smtp._tls look-up failed (the addresses are unknown)' }),
    },
    { description: 'where _smtp._tls.<domain> asks reports to go' },
  ),
  sent: Nullable(
    Type.Object({
      finishedAt: Nullable(Timestamp),
      outcomes: Type.Array(TlsReportOutcome),
    }),
    { description: 'what was sent so far (by the daily job or again by an admin); null: never tried' },
  ),
});
export type TlsReportPreviewBody = Static<typeof TlsReportPreviewBody>;

export const TlsReportSentBody = Type.Object({
  domain: Type.String(),
  day: Type.String(),
  reportId: Type.String(),
  outcomes: Type.Array(TlsReportOutcome),
});
export type TlsReportSentBody = Static<typeof TlsReportSentBody>;
