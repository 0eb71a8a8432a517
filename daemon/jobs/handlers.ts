// The registry of work. Each area adds ONE line here:
//   a queue's handler, imported lazily so a thread loads only the code of its own queue;
//   a periodic task for the maintenance thread.
// A queue without a handler is not claimed: its jobs wait until the handler ships.
import type { QueueName } from '../../shared/constants.ts';
import type { JobHandler, MaintenanceTask } from '../mail/worker-context.ts';
import type { ThreadRuntime } from './thread.ts';

/** Queues drained by a loop of their own (batched claim and outcome statements) instead of a handler. */
export const QUEUE_LOOPS: Partial<Record<QueueName, () => Promise<(runtime: ThreadRuntime) => Promise<void>>>> = {
  send: async () => (await import('./send-loop.ts')).runSendLoop,
};

export const JOB_HANDLERS: Partial<Record<QueueName, () => Promise<JobHandler>>> = {
  send: async () => (await import('../modules/emails/send-job.ts')).handleSendJob,
  scheduled: async () => (await import('../modules/scheduled/service.ts')).handleScheduledJob,
  webhook: async () => (await import('../modules/webhooks/delivery-job.ts')).handleWebhookJob,
  system: async () => (await import('../mail/system-mail-job.ts')).handleSystemMailJob,
  campaign: async () => (await import('../modules/campaigns/expand.ts')).handleCampaignJob,
};

export const MAINTENANCE_TASKS: MaintenanceTask[] = [
  {
    name: 'reverify-domains',
    everyMs: 60 * 60_000,
    run: async (ctx) => (await import('../modules/domains/maintenance.ts')).reverifyDomainsTask.run(ctx),
  },
  {
    name: 'prune-idempotency-keys',
    everyMs: 60 * 60_000,
    run: async (ctx) => (await import('../modules/emails/idempotency.ts')).pruneIdempotencyKeys(ctx.sequelize),
  },
  {
    name: 'dispatch-due-campaigns',
    everyMs: 30_000,
    run: async (ctx) => (await import('../modules/campaigns/dispatch.ts')).dispatchDueCampaigns(ctx),
  },
  {
    name: 'enforce-retention',
    everyMs: 60 * 60_000,
    run: async (ctx) => (await import('../modules/retention/enforce.ts')).retentionTask(ctx),
  },
  {
    name: 'prune-auth-tokens',
    everyMs: 6 * 60 * 60_000,
    run: async (ctx) => (await import('../modules/auth/tokens.ts')).pruneExpiredAuthTokens(ctx.sequelize),
  },
  {
    name: 'vacuum-queue-tables',
    everyMs: 5_000,
    run: async (ctx) => void (await (await import('../queue/vacuum.ts')).vacuumChurnedQueueTables(ctx.sql)),
  },
  {
    name: 'send-tls-reports',
    everyMs: 60 * 60_000,
    run: async (ctx) => void (await (await import('../mta/tls-report-job.ts')).sendTlsReports(ctx)),
  },
  // { name: 'reverify-domains', everyMs: 24 * 60 * 60_000, run: async (ctx) => (await import('../modules/domains/reverify.ts')).reverifyDomains(ctx) },
];
