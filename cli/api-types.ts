// Answer shapes the CLI reads: re-exported from shared/schemas, or, for areas whose schema file does
// not exist yet, local stand-ins. Each block is replaced by the
// area's Static<> types as soon as that file lands; only the fields the CLI reads are listed.

export interface Page<T> {
  data: T[];
  meta: { page: number; limit: number; total: number; totalPages: number };
}

export type { TenantBody as TenantSummary, ApiKeyBody as ApiKeySummary, CreatedApiKeyBody as CreatedApiKey } from '../shared/schemas/tenants.ts';
export type { SendAccepted as SendAnswer, EmailLogSummary as EmailLog, EmailLogDetail } from '../shared/schemas/emails.ts';
export type { ScheduledEmail } from '../shared/schemas/scheduled.ts';
export type { Suppression } from '../shared/schemas/suppressions.ts';

export interface TemplateVersion {
  id: string;
  subject: string;
  locale?: string | null;
  htmlBody?: string | null;
  textBody?: string | null;
  jsx?: string | null;
  published?: boolean;
  publishedAt?: string | null;
  createdAt?: string;
}

export interface Template {
  id: string;
  name: string;
  slug: string;
  status?: string;
  editorMode: 'html' | 'react-email';
  createdAt?: string;
  updatedAt?: string;
  versions?: TemplateVersion[];
}

export interface QueueStats {
  [queue: string]: unknown;
}
