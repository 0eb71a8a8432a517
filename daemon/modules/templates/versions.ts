// Versions of a template: numbered 1, 2, 3 …; each has a locale; at most one published per locale
// (publishing another unpublishes the previous, in one transaction). A published version is frozen:
// change it by creating a new version (a copy of the latest) and publishing that.
import { Op, type Transaction } from 'sequelize';
import type { TenantContext } from '../../context.ts';
import type { TemplateDeps } from './service.ts';
import type { AppDeps } from '../../app-types.ts';
import { ConflictError } from '../../errors.ts';
import type { CreateVersionBody, TemplateVersionView, UpdateVersionBody } from '../../../shared/schemas/templates.ts';
import type { Template } from './model.ts';
import { modelsOf } from '../models.ts';
import { checkVersionContent } from './content.ts';
import { findTemplate, findVersion, versionView } from './views.ts';
import { renderVersion, type RenderedVersion } from './render.ts';
import type { ReactEmailSandbox } from '../../render/react-email/sandbox.ts';

async function touch(template: Template, transaction?: Transaction): Promise<void> {
  template.changed('updatedAt', true);
  await template.save({ transaction });
}

export async function createVersion(
  deps: TemplateDeps,
  ctx: TenantContext,
  input: { templateId: string; body?: CreateVersionBody },
): Promise<TemplateVersionView> {
  const { templateId, body } = input;
  const { Template, TemplateVersion } = modelsOf(deps.db.sequelize);
  const template = await findTemplate(deps.db.sequelize, ctx.tenantId, templateId);
  const created = await deps.db.sequelize.transaction(async (transaction) => {
    // Serialises concurrent creations so version numbers stay unique and gapless per template.
    await Template.findOne({ where: { id: template.id }, lock: transaction.LOCK.UPDATE, transaction });
    const latest = await TemplateVersion.findOne({
      where: { templateId: template.id },
      order: [['version', 'DESC']],
      transaction,
    });
    const version = await TemplateVersion.create(
      {
        tenantId: ctx.tenantId,
        templateId: template.id,
        version: (latest?.version ?? 0) + 1,
        locale: body?.locale ?? latest?.locale ?? template.defaultLocale,
        subject: latest?.subject ?? template.name,
        htmlBody: latest?.htmlBody ?? null,
        textBody: latest?.textBody ?? null,
        jsx: latest?.jsx ?? null,
        createdBy: ctx.adminId,
      },
      { transaction },
    );
    await touch(template, transaction);
    return version;
  });
  return versionView(created);
}

export async function getVersion(
  deps: TemplateDeps,
  ctx: TenantContext,
  input: { templateId: string; versionId: string },
): Promise<TemplateVersionView> {
  const { templateId, versionId } = input;
  return versionView(await findVersion(deps.db.sequelize, ctx.tenantId, templateId, versionId));
}

export async function updateVersion(
  deps: TemplateDeps,
  ctx: TenantContext,
  input: { templateId: string; versionId: string; body: UpdateVersionBody },
): Promise<TemplateVersionView> {
  const { templateId, versionId, body } = input;
  const template = await findTemplate(deps.db.sequelize, ctx.tenantId, templateId);
  const version = await findVersion(deps.db.sequelize, ctx.tenantId, templateId, versionId);
  if (version.publishedAt) {
    throw new ConflictError(
      'A published version cannot be changed: create a new version (POST /templates/{id}/versions), edit it and publish it, or unpublish this one first.',
      'VERSION_PUBLISHED',
    );
  }
  const next = {
    subject: body.subject ?? version.subject,
    htmlBody: body.htmlBody !== undefined ? body.htmlBody : version.htmlBody,
    textBody: body.textBody !== undefined ? body.textBody : version.textBody,
    jsx: body.jsx !== undefined ? body.jsx : version.jsx,
  };
  await checkVersionContent(template.editorMode, next);
  await version.update({ ...next, ...(body.locale !== undefined ? { locale: body.locale } : {}) });
  await touch(template);
  return versionView(version);
}

export async function deleteVersion(
  deps: TemplateDeps,
  ctx: TenantContext,
  input: { templateId: string; versionId: string },
): Promise<void> {
  const { templateId, versionId } = input;
  const template = await findTemplate(deps.db.sequelize, ctx.tenantId, templateId);
  const version = await findVersion(deps.db.sequelize, ctx.tenantId, templateId, versionId);
  if (version.publishedAt)
    throw new ConflictError('The published version cannot be deleted: unpublish it first.', 'VERSION_PUBLISHED');
  const count = await modelsOf(deps.db.sequelize).TemplateVersion.count({ where: { templateId: template.id } });
  if (count <= 1)
    throw new ConflictError(
      'The only version of a template cannot be deleted: delete the template instead.',
      'LAST_VERSION',
    );
  await version.destroy();
  await touch(template);
}

export async function publishVersion(
  deps: TemplateDeps,
  ctx: TenantContext,
  input: { templateId: string; versionId: string },
): Promise<TemplateVersionView> {
  const { templateId, versionId } = input;
  const template = await findTemplate(deps.db.sequelize, ctx.tenantId, templateId);
  const version = await findVersion(deps.db.sequelize, ctx.tenantId, templateId, versionId);
  // The content was checked when saved; check again so a version saved before a rule changed cannot go live broken.
  await checkVersionContent(template.editorMode, version);
  const { Template, TemplateVersion } = modelsOf(deps.db.sequelize);
  await deps.db.sequelize.transaction(async (transaction) => {
    await Template.findOne({ where: { id: template.id }, lock: transaction.LOCK.UPDATE, transaction });
    await TemplateVersion.update(
      { publishedAt: null },
      {
        where: {
          templateId: template.id,
          locale: version.locale,
          publishedAt: { [Op.ne]: null },
          id: { [Op.ne]: version.id },
        },
        transaction,
      },
    );
    if (!version.publishedAt) await version.update({ publishedAt: new Date() }, { transaction });
    await touch(template, transaction);
  });
  return versionView(version);
}

export async function unpublishVersion(
  deps: TemplateDeps,
  ctx: TenantContext,
  input: { templateId: string; versionId: string },
): Promise<TemplateVersionView> {
  const { templateId, versionId } = input;
  const template = await findTemplate(deps.db.sequelize, ctx.tenantId, templateId);
  const version = await findVersion(deps.db.sequelize, ctx.tenantId, templateId, versionId);
  if (version.publishedAt) {
    await version.update({ publishedAt: null });
    await touch(template);
  }
  return versionView(version);
}

export async function previewVersion(
  deps: Pick<AppDeps, 'db'> & { reactEmailSandbox: ReactEmailSandbox },
  ctx: TenantContext,
  input: { templateId: string; versionId: string; data: Record<string, unknown> },
): Promise<RenderedVersion> {
  const { templateId, versionId, data } = input;
  const template = await findTemplate(deps.db.sequelize, ctx.tenantId, templateId);
  const version = await findVersion(deps.db.sequelize, ctx.tenantId, templateId, versionId);
  return renderVersion(deps.reactEmailSandbox, template.editorMode, version, data);
}
