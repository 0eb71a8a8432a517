// The drain's claim (daemon/modules/emails/drain.ts): due send jobs leased (the queue's claim, claimJobsSql)
// together with their logs, read in the same statement; and the marking of one log SENDING for a send without a job.
//
// The claim does not write the logs: the lease on the job is what keeps a log from being sent twice,
// and the attempt is counted when its outcome is recorded (record-outcomes.ts, countsAttempts). A
// relayed log goes from QUEUED to its outcome in one write. Marking it SENDING here too was a second
// update of each log, and with every index of email_logs (two GIN among them) to change it cost as
// much as the outcome's own.
// A log is found by a LATERAL look-up on its id per claimed job: by its form a nested loop of
// primary-key lookups whatever the table's statistics say (see daemon/modules/emails/drain.ts).
import { declare } from '../../../db/sql.ts';
import { SEND_LOG_COLUMNS } from './log-columns.ts';
import { claimJobsSql } from '../../../queue/sql/claim.ts';

const UUID = `'^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'`;

/**
 * $1 worker id, $2 lease (ms), $3 limit. A job whose log is gone or already settled (SENT, FAILED,
 * cancelled …) comes back without one. (SENDING is read too: a log a send in its request marked,
 * or one marked by an older version before it stopped.)
 */
export const CLAIM_SENDS = declare(
  'drain_claim_sends',
  `
  WITH claimed AS (${claimJobsSql({
    queue: `'send'`,
    worker: '$1',
    leaseMs: '$2',
    limit: '$3',
    returning: `id, attempts, max_attempts, run_at,
              CASE WHEN payload->>'emailId' ~ ${UUID} THEN CAST(payload->>'emailId' AS uuid) END AS email_id`,
  })}
  ), logs AS (
    SELECT found.*
      FROM (SELECT DISTINCT email_id FROM claimed WHERE email_id IS NOT NULL) c
     CROSS JOIN LATERAL (SELECT ${SEND_LOG_COLUMNS} FROM email_logs l
                          WHERE l.id = c.email_id AND l.status IN ('QUEUED', 'SENDING')) found
  )
  SELECT c.id::text AS job_id, c.attempts AS job_attempts, c.max_attempts AS job_max_attempts, c.email_id::text AS job_email_id, m.*
    FROM claimed c LEFT JOIN logs m ON m.id = c.email_id::text
   ORDER BY c.run_at, c.id`,
);

/**
 * $1 log id: marks it SENDING without a job (a send delivered in its request, ?sync=true, and the
 * single-job handler the tests drive); nothing when it is gone or already settled.
 */
export const MARK_SENDING = declare(
  'drain_mark_sending',
  `
  UPDATE email_logs l SET status = 'SENDING', attempts = l.attempts + 1, updated_at = now()
   WHERE l.id = $1 AND l.status IN ('QUEUED', 'SENDING')
  RETURNING ${SEND_LOG_COLUMNS}`,
);

/** $1 log id: back to SENT after its hard bounces were recorded, when the relay took it for its other recipients (send-job.ts). */
export const RESTORE_SENT = declare(
  'drain_restore_sent',
  `UPDATE email_logs SET status = 'SENT', updated_at = now() WHERE id = $1`,
);
