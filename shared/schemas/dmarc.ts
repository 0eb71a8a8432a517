// DMARC aggregate reports received for a sending domain (RFC 7489 §7.2): who sends as the domain,
// how much, and whether DKIM and SPF passed aligned with the From domain.
import { Type, type Static } from '@sinclair/typebox';
import { Timestamp, Uuid, Nullable } from './common.ts';

export const DmarcMechanism = Type.Object({
  aligned: Type.Boolean({
    description: "the receiver's DMARC verdict for this mechanism: passed and aligned with the From domain",
  }),
  result: Nullable(Type.String(), { description: 'raw result from auth_results (pass, fail, softfail, none, …)' }),
  domain: Nullable(Type.String(), { description: 'the domain the mechanism authenticated' }),
});

export const DmarcSource = Type.Object({
  sourceIp: Type.String(),
  count: Type.Integer({ description: 'messages from this source with these results' }),
  disposition: Type.String({ description: 'what the receiver did: none, quarantine or reject' }),
  headerFrom: Nullable(Type.String()),
  dkim: DmarcMechanism,
  spf: DmarcMechanism,
  dmarc: Type.Union([Type.Literal('pass'), Type.Literal('fail')], {
    description: 'fail: neither DKIM nor SPF aligned (spoofing, or a sender not set up)',
  }),
});
export type DmarcSource = Static<typeof DmarcSource>;

export const DmarcReportBody = Type.Object({
  id: Uuid,
  orgName: Type.String({ description: 'the reporting organisation (google.com, Yahoo, …)' }),
  orgEmail: Nullable(Type.String()),
  reportId: Type.String(),
  dateBegin: Timestamp,
  dateEnd: Timestamp,
  policy: Type.Record(Type.String(), Type.String(), { description: 'policy_published: p, sp, adkim, aspf, pct' }),
  receivedAt: Timestamp,
  messages: Type.Integer({ description: 'messages the report covers' }),
  failing: Type.Integer({ description: 'messages that failed DMARC (neither DKIM nor SPF aligned)' }),
  sources: Type.Array(DmarcSource),
});
export type DmarcReportBody = Static<typeof DmarcReportBody>;
