// The columns every statement that hands a job to a worker returns, and their mapping to JobRow.
import type { JobRow } from '../types.ts';

export const JOB_COLUMNS = `id::text AS id, queue, tenant_id, payload, attempts, max_attempts, run_at, created_at`;

export interface RawJobRow {
  id: string;
  queue: string;
  tenant_id: string | null;
  payload: Record<string, unknown>;
  attempts: number;
  max_attempts: number;
  run_at: Date;
  created_at: Date;
}

export function toJobRow(raw: RawJobRow): JobRow {
  return {
    id: raw.id,
    queue: raw.queue as JobRow['queue'],
    tenantId: raw.tenant_id,
    payload: raw.payload ?? {},
    attempts: Number(raw.attempts),
    maxAttempts: Number(raw.max_attempts),
    runAt: new Date(raw.run_at),
    createdAt: new Date(raw.created_at),
  };
}
