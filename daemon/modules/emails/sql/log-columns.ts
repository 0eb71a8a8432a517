// The column lists for reading an email log, one per reader: a listed row (the search, the live tail)
// and a log as delivery needs it (the drain's claim and mark). A column added to what a reader sees
// is added here and nowhere else.
import type { EmailLogSummary } from '../../../../shared/schemas/emails.ts';
import type { EmailStatus } from '../../../../shared/constants.ts';

/** The columns of a listed log (GET /emails/logs and its live tail); see LogRowFields. */
export const LOG_ROW_COLUMNS = `id, status, message_id, from_address, to_addresses, cc_addresses, subject, tags, project_id,
  template_version_id, captured, test_mode, attempts, error, sent_at, created_at`;

/** A row of LOG_ROW_COLUMNS. */
export interface LogRowFields {
  id: string;
  status: string;
  message_id: string;
  from_address: string;
  to_addresses: string[];
  cc_addresses: string[];
  subject: string;
  tags: string[];
  project_id: string | null;
  template_version_id: string | null;
  captured: boolean;
  test_mode: boolean;
  attempts: number;
  error: string | null;
  sent_at: Date | string | null;
  created_at: Date | string;
}

/** A listed row as the API answers it (GET /emails/logs, and the live tail's frames). */
export function logSummaryOfRow(row: LogRowFields): EmailLogSummary {
  return {
    id: row.id,
    status: row.status as EmailStatus,
    messageId: row.message_id,
    from: row.from_address,
    to: row.to_addresses,
    cc: row.cc_addresses,
    subject: row.subject,
    tags: row.tags,
    projectId: row.project_id,
    templateVersionId: row.template_version_id,
    captured: row.captured,
    testMode: row.test_mode,
    attempts: row.attempts,
    error: row.error,
    sentAt: row.sent_at ? new Date(row.sent_at).toISOString() : null,
    createdAt: new Date(row.created_at).toISOString(),
  };
}

/** The columns of an email log (alias `l`) that delivery needs (compose, render, relay choice); see RawSendLog. */
export const SEND_LOG_COLUMNS = `l.id::text AS id, l.created_at::text AS created_at, l.tenant_id::text AS tenant_id, l.project_id::text AS project_id, l.message_id,
  l.from_address, l.to_addresses, l.cc_addresses, l.bcc_addresses, l.reply_to, l.subject, l.html_body, l.text_body,
  l.template_version_id::text AS template_version_id, l.data, l.locale, l.headers, l.tags, l.metadata, l.attachments,
  l.track_opens, l.track_clicks, l.test_mode`;

/** A row of SEND_LOG_COLUMNS. */
export interface RawSendLog {
  id: string;
  /** As text, to the microsecond: with the id, the log's primary key (recordSendOutcomes). */
  created_at: string;
  tenant_id: string;
  project_id: string | null;
  message_id: string;
  from_address: string;
  to_addresses: string[];
  cc_addresses: string[];
  bcc_addresses: string[];
  reply_to: string[];
  subject: string;
  html_body: string | null;
  text_body: string | null;
  template_version_id: string | null;
  data: Record<string, unknown> | null;
  locale: string | null;
  headers: Record<string, string>;
  tags: string[];
  metadata: Record<string, unknown> | null;
  attachments: unknown[];
  track_opens: boolean;
  track_clicks: boolean;
  test_mode: boolean;
}
