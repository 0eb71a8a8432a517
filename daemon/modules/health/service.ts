// The checks behind the health routes. Each answers instead of throwing: a down dependency is data.
import type { AppDeps, ReadinessMemo } from '../../app-types.ts';
import { pendingMigrations } from '../../db/migrate.ts';
import { queueStats } from '../../queue/stats.ts';
import { ServiceUnavailableError, errorText } from '../../errors.ts';
import { addDeliveryBacklog } from '../webhooks/sql/backlog-depth.ts';
import { SYSTEM_SENDER_FIX, systemSenderStatus } from '../../mail/system-mail.ts';
import { destinationTotals, listDestinations } from '../../mta/sql/destinations.ts';
import { readResolverHealth } from '../../mta/sql/resolver-health.ts';
import { HEALTH_DESTINATIONS_MAX, type OutboundHealth } from '../../../shared/schemas/outbound-queue.ts';

export interface ReadinessWarning {
  code: 'SYSTEM_SENDER_NOT_ROUTABLE' | 'SYSTEM_MAIL_UNSIGNED' | 'SYSTEM_SENDER_UNKNOWN';
  message: string;
  fix: string;
}

const CHECK_TIMEOUT_MS = 2000;

function withTimeout<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not answer within ${CHECK_TIMEOUT_MS} ms`)),
      CHECK_TIMEOUT_MS,
    );
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

function message(error: unknown): string {
  return errorText(error);
}

export async function checkDatabase(deps: AppDeps): Promise<{ ok: boolean; latencyMs?: number; error?: string }> {
  const started = performance.now();
  try {
    await withTimeout(deps.db.sequelize.query('SELECT 1'), 'the database');
    return { ok: true, latencyMs: Math.round((performance.now() - started) * 10) / 10 };
  } catch (error) {
    return { ok: false, error: message(error) };
  }
}

export async function checkRedis(
  deps: AppDeps,
): Promise<{ ok: boolean; mode: 'redis' | 'memory'; latencyMs?: number; error?: string }> {
  if (!deps.redis) return { ok: true, mode: 'memory' };
  const started = performance.now();
  try {
    await withTimeout(deps.redis.ping(), 'Redis');
    return { ok: true, mode: 'redis', latencyMs: Math.round((performance.now() - started) * 10) / 10 };
  } catch (error) {
    return { ok: false, mode: 'redis', error: message(error) };
  }
}

export function createReadinessMemo(): ReadinessMemo {
  return { migrationsKnownApplied: false };
}

export async function checkReadiness(deps: AppDeps & { readiness: ReadinessMemo }) {
  const database = await checkDatabase(deps);
  let pending: string[] = [];
  if (database.ok && !deps.readiness.migrationsKnownApplied) {
    try {
      pending = await withTimeout(pendingMigrations(deps.db.sequelize), 'the migration table');
      deps.readiness.migrationsKnownApplied = pending.length === 0;
    } catch (error) {
      pending = [`unknown: ${message(error)}`];
    }
  }
  const migrationsOk = database.ok && pending.length === 0;
  const role = deps.config.role;
  const workersOk = role === 'api' ? true : (deps.workers?.alive() ?? false);
  const checks = {
    database,
    migrations: { ok: migrationsOk, pending },
    workers: { ok: workersOk, role, names: deps.workers?.names() ?? [] },
  };
  const warnings = database.ok && migrationsOk ? await systemMailWarnings(deps) : [];
  return {
    status: database.ok && migrationsOk && workersOk ? ('ready' as const) : ('not-ready' as const),
    checks,
    warnings,
  };
}

/** What keeps system mail (resets, verifications, invitations) out of inboxes: a warning, never a failure. */
export async function systemMailWarnings(deps: AppDeps): Promise<ReadinessWarning[]> {
  let status;
  try {
    status = await withTimeout(systemSenderStatus(deps.db.sequelize, deps.config), 'the database');
  } catch (error) {
    return [
      {
        code: 'SYSTEM_SENDER_UNKNOWN',
        message: `The system mail sender could not be read: ${message(error)}`,
        fix: 'Check the database connection.',
      },
    ];
  }
  if (!status.routable) {
    const consequence =
      deps.config.nodeEnv === 'production'
        ? 'so in production it is not sent at all'
        : 'which receiving servers refuse or file as spam';
    return [
      {
        code: 'SYSTEM_SENDER_NOT_ROUTABLE',
        message: `System mail (password resets, verifications, invitations) comes from ${status.from}, ${consequence}.`,
        fix: SYSTEM_SENDER_FIX,
      },
    ];
  }
  if (!status.signedBy) {
    return [
      {
        code: 'SYSTEM_MAIL_UNSIGNED',
        message: `System mail from ${status.from} is not DKIM-signed: no tenant of a platform admin has verified its domain.`,
        fix: "As a platform admin, add the sender's domain with POST /domains in one of your tenants, publish the records it returns and verify it (svc domains add / verify).",
      },
    ];
  }
  return [];
}

/**
 * The outbound MTA's spool: totals for every caller, the destinations (domains other tenants send to)
 * for platform admins only. Held destinations are not stuck: an operator keeps them waiting.
 */
async function outboundHealth(deps: AppDeps, stuckAfterMs: number, platformAdmin: boolean): Promise<OutboundHealth> {
  // One after the other: run side by side on the pool, the pair outlived the check's 2 s budget in
  // test/outbound-queue.test.ts (the reads themselves take milliseconds).
  const totals = await destinationTotals(deps.db.sql);
  const resolver = await readResolverHealth(deps.db.sql);
  const outbound: OutboundHealth = {
    delivery: deps.config.delivery,
    ...totals,
    stuck: totals.oldestWaitingAgeMs > stuckAfterMs,
    resolverUnhealthy: resolver
      .filter((node) => !node.healthy)
      .map((node) => ({ node: node.node, since: node.since.toISOString(), lastError: node.lastError })),
  };
  if (!platformAdmin) return outbound;
  const { rows } = await listDestinations(deps.db.sql, { domain: null, limit: HEALTH_DESTINATIONS_MAX, offset: 0 });
  const now = Date.now();
  outbound.destinations = rows.map((row) => ({
    domain: row.domain,
    queued: row.queued,
    deferred: row.deferred,
    inFlight: row.inFlight,
    held: row.heldAt !== null,
    oldestAgeMs: row.oldestAt ? Math.max(0, now - row.oldestAt.getTime()) : 0,
    oldestWaitingAgeMs: row.oldestWaitingAgeMs,
    stuck: row.heldAt === null && row.oldestWaitingAgeMs > stuckAfterMs,
  }));
  return outbound;
}

/** Per-queue load; a database that does not answer is a 503, not an empty report. */
export async function checkQueues(deps: AppDeps, caller: { platformAdmin: boolean } = { platformAdmin: false }) {
  const stuckAfterMs = deps.config.queueStuckAfterMs;
  try {
    const queues = await withTimeout(queueStats(deps.db.sequelize, stuckAfterMs), 'the database');
    // Webhook deliveries wait in webhook_deliveries, not in jobs: the 'webhook' queue counts them too.
    const webhook = await withTimeout(addDeliveryBacklog(queues.webhook, deps.db.sql, stuckAfterMs), 'the database');
    if (webhook) queues.webhook = webhook;
    const outbound = await withTimeout(outboundHealth(deps, stuckAfterMs, caller.platformAdmin), 'the database');
    return {
      ok: !Object.values(queues).some((queue) => queue.stuck) && !outbound.stuck,
      stuckAfterMs,
      queues,
      outbound,
    };
  } catch (error) {
    // Queue statistics are only ever a database read: its failure is the database's.
    throw new ServiceUnavailableError(`Queue statistics are unavailable: ${message(error)}`, 'DATABASE_UNAVAILABLE');
  }
}
