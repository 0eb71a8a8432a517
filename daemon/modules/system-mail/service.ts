// Reading captured system mail (platform admins): on the embedded default nothing leaves the machine, so this
// is where the first admin finds a verification, reset or invitation link.
import type { AppDeps } from '../../app-types.ts';
import type { AdminContext } from '../../context.ts';
import { NotFoundError } from '../../errors.ts';
import { pageOf, pageWindow, type Page } from '../../db/paging.ts';
import type { SystemMailMessage, SystemMailQuery, SystemMailSummary } from '../../../shared/schemas/system-mail.ts';
import { findCapturedSystemMail, listCapturedSystemMail, type CapturedSystemMailRow } from './queries.ts';

export type SystemMailDeps = Pick<AppDeps, 'db'>;

const summary = (row: CapturedSystemMailRow): SystemMailSummary => ({
  id: row.id,
  messageId: row.messageId,
  from: row.from,
  to: row.to,
  subject: row.subject,
  createdAt: new Date(row.createdAt).toISOString(),
});

export async function listSystemMail(
  deps: SystemMailDeps,
  _admin: AdminContext,
  input: SystemMailQuery,
): Promise<Page<SystemMailSummary>> {
  const window = pageWindow(input);
  const { rows, total } = await listCapturedSystemMail(deps.db.sequelize, {
    to: input.to ?? null,
    limit: window.limit,
    offset: window.offset,
  });
  return pageOf(rows.map(summary), window, total);
}

export async function readSystemMail(
  deps: SystemMailDeps,
  _admin: AdminContext,
  input: { id: string },
): Promise<SystemMailMessage> {
  const row = await findCapturedSystemMail(deps.db.sequelize, input.id);
  if (!row) throw new NotFoundError('Captured system mail');
  return { ...summary(row), raw: row.raw };
}
