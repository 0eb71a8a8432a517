// The outbound MTA's queue as platform admins see and steer it (issue 28, docs/mta.md "Visibility"):
// destinations with their counts, next try and last response; retry now, hold and release one domain.
// Platform operations: the spool holds every tenant's mail, so nothing here is filtered by tenant, and
// every action leaves an audit row in the transaction that makes it.
import { QueryTypes, type Transaction } from 'sequelize';
import type { AppDeps } from '../../app-types.ts';
import type { AdminContext } from '../../context.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.ts';
import { pageOf, pageWindow } from '../../db/paging.ts';
import {
  HOLD_DESTINATION,
  listDestinations,
  RELEASE_DESTINATION,
  RETRY_DESTINATION,
  type DestinationRow,
} from '../../mta/sql/destinations.ts';
import type { Statement } from '../../db/sql.ts';
import { readResolverHealth } from '../../mta/sql/resolver-health.ts';
import { readSourceFaults } from '../../mta/sql/source-faults.ts';
import { recordAudit, type AuditAction } from '../audit/service.ts';
import { normalizeDomainName } from '../../mail/domain-names.ts';
import { activeReactionBodies } from '../shaping/service.ts';
import type {
  HoldDestinationBody,
  OutboundDestination,
  OutboundQueuePage,
  OutboundQueueQuery,
  RetryDestinationAnswer,
} from '../../../shared/schemas/outbound-queue.ts';

export type OutboundQueueDeps = Pick<AppDeps, 'db' | 'config'>;
type Actor = AdminContext & { ip?: string };

/** The spool's form of a domain typed by a person (`Bücher.Example.` → `xn--bcher-kva.example`); 400 otherwise. */
export function destinationDomain(input: string): string {
  try {
    return normalizeDomainName(input);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    throw new ValidationError(error.message, [{ field: 'domain', message: error.message }]);
  }
}

export function destinationView(row: DestinationRow, stuckAfterMs: number): OutboundDestination {
  const held = row.heldAt !== null;
  return {
    domain: row.domain,
    queued: row.queued,
    deferred: row.deferred,
    inFlight: row.inFlight,
    waiting: row.waiting,
    waitReason: row.waitReason,
    waitUntil: row.waitUntil?.toISOString() ?? null,
    oldestAt: row.oldestAt?.toISOString() ?? null,
    nextTryAt: row.nextTryAt?.toISOString() ?? null,
    lastAttemptAt: row.lastAttemptAt?.toISOString() ?? null,
    lastResponse: row.lastResponse,
    oldestWaitingAgeMs: row.oldestWaitingAgeMs,
    stuck: !held && row.oldestWaitingAgeMs > stuckAfterMs,
    held,
    heldAt: row.heldAt?.toISOString() ?? null,
    heldBy: row.heldBy ? { id: row.heldBy, email: row.heldByEmail } : null,
    holdReason: row.holdReason,
  };
}

/** GET /platform/queue: every destination with mail spooled or a hold, oldest mail first. */
export async function listOutboundQueue(
  deps: OutboundQueueDeps,
  _admin: AdminContext,
  query: OutboundQueueQuery,
): Promise<OutboundQueuePage> {
  const window = pageWindow(query);
  const domain = query.domain === undefined ? null : destinationDomain(query.domain);
  const [{ rows, total }, reactions, resolver, sourceFaults] = await Promise.all([
    listDestinations(deps.db.sql, { domain, limit: window.limit, offset: window.offset }),
    activeReactionBodies(deps.db.sql),
    readResolverHealth(deps.db.sql),
    readSourceFaults(deps.db.sql),
  ]);
  const page = pageOf(
    rows.map((row) => destinationView(row, deps.config.queueStuckAfterMs)),
    window,
    total,
  );
  // A reaction to one destination is shown with that destination's page only when asked for it.
  const shown = domain === null ? reactions : reactions.filter((r) => r.domain === null || r.domain === domain);
  return {
    ...page,
    delivery: deps.config.delivery,
    resolver: resolver.map((node) => ({
      ...node,
      since: node.since.toISOString(),
      checkedAt: node.checkedAt.toISOString(),
    })),
    reactions: shown,
    sourceFaults: sourceFaults.map((fault) => ({
      ...fault,
      since: fault.since.toISOString(),
      lastSeenAt: fault.lastSeenAt.toISOString(),
    })),
  };
}

/** One destination as it stands; a domain with nothing spooled and no hold is all zeros. */
async function readDestination(deps: OutboundQueueDeps, domain: string): Promise<OutboundDestination> {
  const { rows } = await listDestinations(deps.db.sql, { domain, limit: 1, offset: 0 });
  const row: DestinationRow = rows[0] ?? {
    domain,
    queued: 0,
    deferred: 0,
    inFlight: 0,
    waiting: 0,
    waitReason: null,
    waitUntil: null,
    oldestAt: null,
    nextTryAt: null,
    lastAttemptAt: null,
    lastResponse: null,
    oldestWaitingAgeMs: 0,
    heldAt: null,
    heldBy: null,
    heldByEmail: null,
    holdReason: null,
  };
  return destinationView(row, deps.config.queueStuckAfterMs);
}

/** Runs one action statement and its audit row in one transaction. */
async function act<T extends object>(
  deps: OutboundQueueDeps,
  actor: Actor,
  action: AuditAction,
  statement: Statement,
  values: unknown[],
  metadata: (row: T) => Record<string, unknown>,
): Promise<T> {
  return deps.db.sequelize.transaction(async (transaction: Transaction) => {
    const [row] = await deps.db.sequelize.query<T>(statement.text, {
      bind: values,
      type: QueryTypes.SELECT,
      transaction,
    });
    await recordAudit(
      deps.db.sequelize,
      { action, adminId: actor.adminId, ip: actor.ip, target: String(values[0]), metadata: metadata(row) },
      transaction,
    );
    return row;
  });
}

/**
 * POST /platform/queue/{domain}/retry: the domain's waiting messages are due now and the MTA loop is
 * woken. 404 when nothing is spooled for the domain (a mistyped name says so instead of "0 retried");
 * a held domain's messages are made due but stay held until released.
 */
export async function retryDestination(
  deps: OutboundQueueDeps,
  actor: Actor,
  input: { domain: string },
): Promise<RetryDestinationAnswer> {
  const domain = destinationDomain(input.domain);
  const before = await readDestination(deps, domain);
  if (before.queued + before.deferred + before.inFlight === 0)
    throw new NotFoundError(`Mail to ${domain} in the outbound queue`);
  const { made_due: madeDue } = await act<{ made_due: number }>(
    deps,
    actor,
    'platform.queue_retried',
    RETRY_DESTINATION,
    [domain],
    (row) => ({ madeDue: row.made_due }),
  );
  return { madeDue, destination: await readDestination(deps, domain) };
}

/**
 * POST /platform/queue/{domain}/hold: the MTA loop stops claiming the domain's messages; those already
 * claimed finish their attempt. A domain with nothing spooled may be held (a pre-emptive hold: mail
 * accepted for it later waits). Holding a held domain again replaces the reason and keeps the time.
 */
export async function holdDestination(
  deps: OutboundQueueDeps,
  actor: Actor,
  input: { domain: string } & HoldDestinationBody,
): Promise<OutboundDestination> {
  const domain = destinationDomain(input.domain);
  await act(
    deps,
    actor,
    'platform.queue_held',
    HOLD_DESTINATION,
    [domain, actor.adminId, input.reason ?? null],
    () => ({
      reason: input.reason ?? null,
    }),
  );
  return readDestination(deps, domain);
}

/** POST /platform/queue/{domain}/release: the hold ends and the domain's messages are due now. 409 when not held. */
export async function releaseDestination(
  deps: OutboundQueueDeps,
  actor: Actor,
  input: { domain: string },
): Promise<OutboundDestination> {
  const domain = destinationDomain(input.domain);
  const released = await deps.db.sequelize.transaction(async (transaction: Transaction) => {
    const [row] = await deps.db.sequelize.query<{ released: number; made_due: number }>(RELEASE_DESTINATION.text, {
      bind: [domain],
      type: QueryTypes.SELECT,
      transaction,
    });
    if (row.released === 0) return false;
    await recordAudit(
      deps.db.sequelize,
      {
        action: 'platform.queue_released',
        adminId: actor.adminId,
        ip: actor.ip,
        target: domain,
        metadata: { madeDue: row.made_due },
      },
      transaction,
    );
    return true;
  });
  if (!released) throw new ConflictError(`${domain} is not held: there is nothing to release.`, 'NOT_HELD');
  return readDestination(deps, domain);
}
