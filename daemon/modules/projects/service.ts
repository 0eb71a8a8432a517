// Projects: CRUD, the project's own SMTP relay (password sealed at rest) and a real handshake check.
import type { AppDeps } from '../../app-types.ts';
import type { Secrets } from '../../secrets.ts';
import { NotFoundError } from '../../errors.ts';
import type { TenantContext } from '../../context.ts';
import { seal, unseal } from '../../crypto/sealed.ts';
import { verifySmtp, type SmtpSettings } from '../../mail/transport.ts';
import type { Project } from './model.ts';
import { modelsOf } from '../models.ts';
import type { Sequelize } from 'sequelize';

export interface ProjectSmtpInput {
  host: string;
  port: number;
  secure: boolean;
  user?: string;
  pass?: string;
}

function view(row: Project) {
  return {
    id: row.id,
    name: row.name,
    smtp: row.smtpHost
      ? {
          host: row.smtpHost,
          port: row.smtpPort ?? 587,
          secure: row.smtpSecure,
          user: row.smtpUser ?? null,
          passwordSet: row.smtpPassSealed !== null,
          verifiedAt: row.smtpVerifiedAt ? row.smtpVerifiedAt.toISOString() : null,
        }
      : null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
export type ProjectView = ReturnType<typeof view>;

function smtpColumns(secrets: Secrets, smtp: ProjectSmtpInput | null) {
  if (!smtp)
    return {
      smtpHost: null,
      smtpPort: null,
      smtpSecure: false,
      smtpUser: null,
      smtpPassSealed: null,
      smtpVerifiedAt: null,
    };
  return {
    smtpHost: smtp.host,
    smtpPort: smtp.port,
    smtpSecure: smtp.secure,
    smtpUser: smtp.user ?? null,
    smtpPassSealed: smtp.pass ? seal(secrets.encryptionKey, smtp.pass) : null,
    smtpVerifiedAt: null,
  };
}

async function findOwned(deps: ProjectDeps, ctx: TenantContext, id: string): Promise<Project> {
  const row = await modelsOf(deps.db.sequelize).Project.findOne({ where: { id, tenantId: ctx.tenantId } });
  if (!row) throw new NotFoundError('The project');
  return row;
}

export type ProjectDeps = Pick<AppDeps, 'db' | 'secrets'>;

export async function listProjects(deps: ProjectDeps, ctx: TenantContext): Promise<ProjectView[]> {
  const rows = await modelsOf(deps.db.sequelize).Project.findAll({
    where: { tenantId: ctx.tenantId },
    order: [['createdAt', 'ASC']],
  });
  return rows.map(view);
}

export async function createProject(
  deps: ProjectDeps,
  ctx: TenantContext,
  input: { name: string; smtp?: ProjectSmtpInput },
): Promise<ProjectView> {
  return view(
    await modelsOf(deps.db.sequelize).Project.create({
      tenantId: ctx.tenantId,
      name: input.name,
      ...smtpColumns(deps.secrets, input.smtp ?? null),
    }),
  );
}

export async function getProject(deps: ProjectDeps, ctx: TenantContext, input: { id: string }): Promise<ProjectView> {
  return view(await findOwned(deps, ctx, input.id));
}

export async function updateProject(
  deps: ProjectDeps,
  ctx: TenantContext,
  input: { id: string; body: { name?: string; smtp?: ProjectSmtpInput | null } },
): Promise<ProjectView> {
  const { id, body } = input;
  const row = await findOwned(deps, ctx, id);
  if (body.name !== undefined) row.name = body.name;
  if (body.smtp !== undefined) {
    // A changed relay without a new password keeps the stored one (clients never see it to resend it).
    const keepPass = body.smtp && body.smtp.pass === undefined ? row.smtpPassSealed : undefined;
    row.set(smtpColumns(deps.secrets, body.smtp));
    if (keepPass !== undefined) row.smtpPassSealed = keepPass;
  }
  await row.save();
  return view(row);
}

export async function deleteProject(deps: ProjectDeps, ctx: TenantContext, input: { id: string }): Promise<void> {
  const row = await findOwned(deps, ctx, input.id);
  await row.destroy();
}

/** The project's relay settings with the password unsealed; null when it has none. */
export async function projectSmtpSettings(
  sequelize: Sequelize,
  tenantId: string,
  projectId: string,
  secrets: Secrets,
): Promise<SmtpSettings | null> {
  const row = await modelsOf(sequelize).Project.findOne({ where: { id: projectId, tenantId } });
  if (!row || !row.smtpHost) return null;
  return {
    host: row.smtpHost,
    port: row.smtpPort ?? 587,
    secure: row.smtpSecure,
    user: row.smtpUser,
    pass: row.smtpPassSealed ? unseal(secrets.encryptionKey, row.smtpPassSealed) : null,
  };
}

/** True when the project exists in the tenant (a send naming another tenant's project is refused). */
export async function projectExists(sequelize: Sequelize, tenantId: string, projectId: string): Promise<boolean> {
  return (await modelsOf(sequelize).Project.count({ where: { id: projectId, tenantId } })) > 0;
}

export async function verifyProjectSmtp(
  deps: ProjectDeps,
  ctx: TenantContext,
  input: { id: string },
): Promise<{ ok: boolean; error?: string }> {
  const { id } = input;
  await findOwned(deps, ctx, id);
  const settings = await projectSmtpSettings(deps.db.sequelize, ctx.tenantId, id, deps.secrets);
  if (!settings) return { ok: false, error: 'This project has no SMTP settings; sends use the default relay.' };
  const result = await verifySmtp(settings);
  if (result.ok)
    await modelsOf(deps.db.sequelize).Project.update(
      { smtpVerifiedAt: new Date() },
      { where: { id, tenantId: ctx.tenantId } },
    );
  return result;
}
