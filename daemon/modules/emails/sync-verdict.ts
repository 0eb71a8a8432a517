// `?sync=true` with direct delivery (issue 49 §4): the send worker's part ends when the message is in
// the spool, which says nothing of the recipient's server. So the request waits, up to
// SYNC_DIRECT_WAIT_MS, for what the MTA records — delivered, bounced, deferred with the server's reply,
// or held by a wait of ours (warm-up) — and answers that; past the bound it answers QUEUED and says so.
// SENT never stands for "we tried". Polls the log by its key: the MTA may run on another node.
import type { Sql } from '../../db/sql.ts';
import { SYNC_VERDICT, type SyncVerdictRow } from './sql/sync-verdict.ts';
import type { SendAccepted } from '../../../shared/schemas/emails.ts';

/**
 * A sync send's result: a relay's SENT or FAILED; with direct delivery what the recipient's server said
 * (DELIVERED, BOUNCED, or QUEUED with its deferral) or QUEUED with why (sync-verdict.ts).
 */
export type SyncAnswer = Pick<SendAccepted, 'status' | 'error' | 'deferred' | 'waiting' | 'message'>;

const POLL_MS = 100;

/** The answer a verdict row gives, or null while the MTA has recorded nothing yet. */
export function verdictOf(row: SyncVerdictRow): SyncAnswer | null {
  switch (row.status) {
    case 'DELIVERED':
      return { status: 'DELIVERED' };
    case 'BOUNCED':
    case 'COMPLAINED':
      return { status: 'BOUNCED', error: row.error ?? 'bounced' };
    case 'FAILED':
      return { status: 'FAILED', error: row.error ?? 'failed' };
  }
  const latest = row.latest;
  if (latest?.type === 'deferred')
    return {
      status: 'QUEUED',
      deferred: { reason: String(latest.data.response ?? ''), retryAt: (latest.data.retryAt as string) ?? null },
      message: "deferred by the recipient's server (or its DNS); it will be tried again at retryAt",
    };
  if (latest?.type === 'waiting')
    return {
      status: 'QUEUED',
      waiting: { reason: String(latest.data.reason ?? ''), until: (latest.data.until as string) ?? null },
      message: 'held by this service (not by the recipient): it goes at waiting.until',
    };
  return null;
}

export async function awaitSyncVerdict(
  sql: Sql,
  input: { emailId: string; tenantId: string; waitMs: number },
): Promise<SyncAnswer> {
  const deadline = Date.now() + input.waitMs;
  for (;;) {
    const [row] = await sql.rows<SyncVerdictRow>(SYNC_VERDICT, [input.emailId, input.tenantId]);
    const verdict = row ? verdictOf(row) : null;
    if (verdict) return verdict;
    if (Date.now() >= deadline)
      return {
        status: 'QUEUED',
        message: `handed to the outbound MTA; the recipient's server had not answered within ${Math.round(input.waitMs / 1000)} s — follow it in the email's log`,
      };
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
