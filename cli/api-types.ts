// Answer shapes the CLI reads, under the names its commands use; all come from shared/schemas.

import type { PageOf } from '../shared/schemas/common.ts';

/** A page; the log list adds an estimate flag and a cursor to its meta. */
export type Page<T> = PageOf<T> & { meta: { totalIsEstimate?: boolean; nextCursor?: string | null } };

export type {
  TenantBody as TenantSummary,
  ApiKeyBody as ApiKeySummary,
  CreatedApiKeyBody as CreatedApiKey,
} from '../shared/schemas/tenants.ts';
export type {
  SendAccepted as SendAnswer,
  EmailLogSummary as EmailLog,
  EmailLogDetail,
} from '../shared/schemas/emails.ts';
export type { ScheduledEmail } from '../shared/schemas/scheduled.ts';
export type { Suppression } from '../shared/schemas/suppressions.ts';
