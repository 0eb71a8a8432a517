// The log of a send handed to the outbound MTA: SENDING, with the headers that went out (and the
// rendered content of a template send). Written by the spool's own statement (mta/sql/spool.ts), in its
// transaction, so no MTA thread can claim a spool row whose log is not written yet. When the drain wrote
// it with its batch, after the spool row had committed, the MTA had often delivered the message by then:
// the two transactions waited on each other's row locks of the same logs (docs/mta.md, "Performance").
import { countedAttemptsSql, type LogOutcome } from './record-outcomes.ts';

/**
 * What the spool's statement writes on the log of the message it spools: the fields of a LogOutcome it
 * takes (createdAt is the log's partition key; subject, html and text a template's rendered content, absent:
 * the log's own), the attempt as RECORD_OUTCOMES counts it, and the headers sent.
 */
export type SpooledLog = Pick<LogOutcome, 'createdAt'> &
  Partial<Pick<LogOutcome, 'subject' | 'html' | 'text'>> & { attempt: number | null; sentHeaders: string };

/** SpooledLog's values in the order markSpooledLogSql numbers its parameters. */
export function spooledLogValues(log: SpooledLog | null): unknown[] {
  return [
    log?.createdAt ?? null,
    log?.attempt ?? null,
    log?.sentHeaders ?? null,
    log?.subject ?? null,
    log?.html ?? null,
    log?.text ?? null,
  ];
}

/**
 * The UPDATE of the log `emailId` of tenant `tenantId` (parameter references), with spooledLogValues from
 * parameter `first` on; nothing when `spooledCte` inserted no row (the job ran again after a crash and
 * its rows were spooled, and the log written, the first time). A log past QUEUED/SENDING keeps its state.
 */
export function markSpooledLogSql(input: {
  tenantId: string;
  emailId: string;
  first: number;
  spooledCte: string;
}): string {
  const p = (index: number) => `$${input.first + index}`;
  return `
    UPDATE email_logs l
       SET status = 'SENDING', error = NULL,
           attempts = ${countedAttemptsSql('l', `${p(1)}::int`)},
           sent_headers = CAST(${p(2)}::text AS jsonb),
           subject = COALESCE(${p(3)}::text, l.subject),
           html_body = COALESCE(${p(4)}::text, l.html_body),
           text_body = COALESCE(${p(5)}::text, l.text_body),
           sent_at = now(), updated_at = now()
     WHERE l.id = ${input.emailId} AND l.tenant_id = ${input.tenantId} AND l.created_at = ${p(0)}::timestamptz
       AND l.status IN ('QUEUED', 'SENDING') AND EXISTS (SELECT 1 FROM ${input.spooledCte})
    RETURNING l.id`;
}
