// Runs waiting send/scheduled/system/campaign jobs in the test process, as a worker thread would.
import { QueryTypes } from 'sequelize';
import pino from 'pino';
import type { TestContext } from './context.ts';
import type { JobRow } from '../../daemon/queue/types.ts';
import type { WorkerContext } from '../../daemon/mail/worker-context.ts';
import { handleSendJob } from '../../daemon/modules/emails/send-job.ts';
import { handleScheduledJob } from '../../daemon/modules/scheduled/service.ts';
import { handleSystemMailJob } from '../../daemon/mail/system-mail-job.ts';
import { handleCampaignJob } from '../../daemon/modules/campaigns/expand.ts';

export function workerContext(ctx: TestContext): WorkerContext {
  return {
    config: ctx.config,
    secrets: ctx.deps.secrets,
    ...ctx.workerResources,
    sequelize: ctx.db.sequelize,
    sql: ctx.db.sql,
    log: pino({ level: 'silent' }),
    workerId: 'test',
  };
}

/** Takes every job of `queue` (due or not), runs it once, returns the outcomes' kinds. */
export async function runJobs(
  ctx: TestContext,
  queue: 'send' | 'scheduled' | 'system' | 'campaign',
  attempts = 0,
): Promise<string[]> {
  const jobs = await ctx.db.sequelize.query<{
    id: string;
    payload: Record<string, unknown>;
    attempts: number;
    max_attempts: number;
    tenant_id: string;
  }>(`DELETE FROM jobs WHERE queue = :queue RETURNING id::text, payload, attempts, max_attempts, tenant_id`, {
    replacements: { queue },
    type: QueryTypes.SELECT,
  });
  const handler = {
    send: handleSendJob,
    scheduled: handleScheduledJob,
    system: handleSystemMailJob,
    campaign: handleCampaignJob,
  }[queue];
  const outcomes: string[] = [];
  for (const job of jobs) {
    const row: JobRow = {
      id: job.id,
      queue,
      tenantId: job.tenant_id,
      payload: job.payload,
      attempts: attempts || job.attempts,
      maxAttempts: job.max_attempts,
      runAt: new Date(),
      createdAt: new Date(),
    };
    outcomes.push((await handler(row, workerContext(ctx))).kind);
  }
  return outcomes;
}
