// Scheduled sends: kept as a row with the request, run at sendAt by a 'scheduled' job keyed by the
// row, through the same acceptSends as every send (quota is checked then, not at scheduling).
import type { AppDeps } from '../../app-types.ts';
import { ApiError, ConflictError, NotFoundError, ValidationError } from '../../errors.ts';
import type { TenantContext } from '../../context.ts';
import { enqueueJob, removeJob } from '../../queue/enqueue.ts';
import type { JobHandler } from '../../mail/worker-context.ts';
import { DEFAULT_SCHEDULE_TIMEZONE, type ScheduleEmailBody } from '../../../shared/schemas/scheduled.ts';
import { acceptSends, workerSendDeps, type SendDeps } from '../emails/service.ts';
import { normalizeSend, type SendInput } from '../emails/validate.ts';
import { checkInlineLiquid, renderInlineLiquid } from '../emails/inline-liquid.ts';
import type { ScheduledEmail, ScheduledStatus } from './model.ts';
import { modelsOf } from '../models.ts';
import { findPage } from '../../db/paging.ts';

export function scheduledJobKey(id: string): string {
  return `scheduled:${id}`;
}

function checkTimezone(timezone: string): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw new ValidationError(`${timezone} is not an IANA timezone.`, [
      { field: 'timezone', message: 'must be an IANA timezone such as Europe/Madrid' },
    ]);
  }
}

/** Offset of `timezone` from UTC at the instant `utcMs`, in ms. */
function zoneOffsetMs(timezone: string, utcMs: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: timezone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(utcMs));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const asUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return asUtc - Math.floor(utcMs / 1000) * 1000;
}

const ISO_LOCAL = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3})\d*)?)?$/;
const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** sendAt as an instant: with an offset as written, without one as wall-clock time in `timezone`. */
export function resolveSendAt(sendAt: string, timezone: string): Date {
  checkTimezone(timezone);
  const invalid = () =>
    new ValidationError('sendAt is not an ISO 8601 date-time.', [
      { field: 'sendAt', message: 'must be an ISO 8601 date-time, e.g. 2030-01-31T09:00:00 or 2030-01-31T09:00:00Z' },
    ]);
  if (ISO_WITH_OFFSET.test(sendAt)) {
    const date = new Date(sendAt);
    if (Number.isNaN(date.getTime())) throw invalid();
    return date;
  }
  const m = ISO_LOCAL.exec(sendAt);
  if (!m) throw invalid();
  const [year, month, day, hour, minute, second, ms] = [
    m[1],
    m[2],
    m[3],
    m[4],
    m[5],
    m[6] ?? '0',
    (m[7] ?? '0').padEnd(3, '0'),
  ].map(Number);
  const wall = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  const check = new Date(wall);
  if (check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59)
    throw invalid();
  // Two passes settle the offset across a DST change.
  let instant = wall - zoneOffsetMs(timezone, wall);
  instant = wall - zoneOffsetMs(timezone, instant);
  return new Date(instant);
}

function view(row: ScheduledEmail) {
  return {
    id: row.id,
    tenantId: row.tenantId,
    status: row.status,
    sendAt: row.sendAt.toISOString(),
    timezone: row.timezone,
    payload: row.payload,
    emailId: row.emailId ?? null,
    error: row.error ?? null,
    createdAt: row.createdAt.toISOString(),
  };
}

export type ScheduledDeps = Pick<AppDeps, 'db'>;

export async function scheduleEmail(deps: ScheduledDeps, ctx: TenantContext, body: ScheduleEmailBody) {
  const { sequelize } = deps.db;
  const { sendAt, timezone: zone, ...payload } = body;
  const timezone = zone ?? DEFAULT_SCHEDULE_TIMEZONE;
  const at = resolveSendAt(sendAt, timezone);
  if (at.getTime() <= Date.now()) {
    throw new ValidationError('sendAt is in the past.', [
      { field: 'sendAt', message: `must be in the future (it is ${at.toISOString()})` },
    ]);
  }
  const { idempotencyKey: _ignored, ...request } = payload;
  normalizeSend(request); // refuse a bad request now rather than at sendAt
  checkInlineLiquid(request);
  return sequelize.transaction(async (tx) => {
    const row = await modelsOf(sequelize).ScheduledEmail.create(
      {
        tenantId: ctx.tenantId,
        apiKeyId: ctx.apiKeyId,
        adminId: ctx.adminId,
        testMode: ctx.testMode,
        sendAt: at,
        timezone,
        payload: request,
      },
      { transaction: tx },
    );
    await enqueueJob(
      sequelize,
      {
        queue: 'scheduled',
        tenantId: ctx.tenantId,
        payload: { scheduledEmailId: row.id },
        runAt: at,
        key: scheduledJobKey(row.id),
      },
      tx,
    );
    return view(row);
  });
}

export async function listScheduledEmails(
  deps: ScheduledDeps,
  ctx: TenantContext,
  query: { page?: number; limit?: number; status?: ScheduledStatus },
) {
  const where = { tenantId: ctx.tenantId, ...(query.status ? { status: query.status } : {}) };
  return findPage(
    modelsOf(deps.db.sequelize).ScheduledEmail,
    {
      where,
      order: [
        ['sendAt', 'ASC'],
        ['id', 'ASC'],
      ],
    },
    query,
    (rows) => rows.map(view),
  );
}

export async function cancelScheduledEmail(deps: ScheduledDeps, ctx: TenantContext, input: { id: string }) {
  const { sequelize } = deps.db;
  return sequelize.transaction(async (tx) => {
    const row = await modelsOf(sequelize).ScheduledEmail.findOne({
      where: { id: input.id, tenantId: ctx.tenantId },
      transaction: tx,
      lock: tx.LOCK.UPDATE,
    });
    if (!row) throw new NotFoundError('The scheduled email');
    if (row.status !== 'PENDING')
      throw new ConflictError(
        `Only a PENDING scheduled email can be cancelled; this one is ${row.status}.`,
        'NOT_PENDING',
      );
    if (!(await removeJob(sequelize, 'scheduled', scheduledJobKey(row.id), tx))) {
      throw new ConflictError(
        'This scheduled email is being sent right now and can no longer be cancelled.',
        'ALREADY_RUNNING',
      );
    }
    await row.update({ status: 'CANCELLED' }, { transaction: tx });
    return view(row);
  });
}

/** Runs a due scheduled email through the pipeline; PENDING → SENT (accepted) or FAILED (refused). */
export async function runScheduledEmail(deps: SendDeps, id: string): Promise<void> {
  const row = await modelsOf(deps.db.sequelize).ScheduledEmail.findByPk(id);
  if (!row || row.status !== 'PENDING') return;
  const ctx: TenantContext = {
    tenantId: row.tenantId,
    adminId: row.adminId,
    apiKeyId: row.apiKeyId,
    role: null,
    isPlatformAdmin: false,
    testMode: row.testMode,
  };
  try {
    const payload = await renderInlineLiquid(row.payload as unknown as SendInput);
    const send = { ...normalizeSend(payload), scheduledEmailId: row.id };
    // The row id as idempotency key: a retried job after a crash answers with the first send.
    const answer = await acceptSends(deps, ctx, {
      sends: [send],
      shape: 'single',
      idempotencyKey: scheduledJobKey(row.id),
    });
    await row.update({ status: 'SENT', emailId: (answer.body as { id: string }).id, error: null });
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    await row.update({ status: 'FAILED', error: error.message });
  }
}

export const handleScheduledJob: JobHandler = async (job, ctx) => {
  const id = job.payload.scheduledEmailId;
  if (typeof id !== 'string') return { kind: 'fail', error: 'scheduled job without a scheduledEmailId' };
  await runScheduledEmail(workerSendDeps(ctx), id);
  return { kind: 'done' };
};
