// The sending-risk window (emails/sending-risk.ts): a tenant's recent settled sends and their
// distinct complained and hard-bounced recipients.
import { declare } from '../../../db/sql.ts';

/** $1 tenant, $2 window in days, $3 window in sends. */
export const SENDING_RISK_STATS = declare(
  'emails.sending-risk-stats',
  `
  WITH recent AS (
    SELECT id FROM email_logs
     WHERE tenant_id = $1::uuid AND test_mode = false
       AND status NOT IN ('QUEUED', 'SENDING', 'SUPPRESSED', 'CANCELLED')
       AND created_at > now() - make_interval(days => $2::int)
     ORDER BY created_at DESC LIMIT $3::int)
  SELECT (SELECT count(*) FROM recent)::int AS sends,
         count(DISTINCT o.recipient) FILTER (WHERE o.kind = 'complaint')::int AS complaints,
         count(DISTINCT o.recipient) FILTER (WHERE o.kind = 'hard_bounce')::int AS "hardBounces"
    FROM recipient_outcomes o
   WHERE o.tenant_id = $1::uuid AND o.kind IN ('complaint', 'hard_bounce')
     AND o.email_id IN (SELECT id FROM recent)`,
);
