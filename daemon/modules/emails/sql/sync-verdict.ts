// What a sync send with direct delivery waits on (../sync-verdict.ts): the log's status and its latest
// timeline row of the MTA's (delivered, bounced, deferred, waiting), by the log's key; both indexed.
import { declare } from '../../../db/sql.ts';

export const SYNC_VERDICT = declare(
  'emails.sync-verdict',
  `
  SELECT l.status, l.error,
         (SELECT json_build_object('type', e.type, 'data', e.data) FROM email_events e
           WHERE e.email_id = l.id AND e.type IN ('delivered', 'bounced', 'deferred', 'waiting')
           ORDER BY e.created_at DESC LIMIT 1) AS latest
    FROM email_logs l
   WHERE l.id = $1 AND l.tenant_id = $2`,
);

export interface SyncVerdictRow {
  status: string;
  error: string | null;
  latest: { type: string; data: Record<string, unknown> } | null;
}
