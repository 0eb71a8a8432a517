// Template tags: a per-tenant catalogue of names, attached to templates many-to-many.
import { UniqueConstraintError, type Sequelize } from 'sequelize';
import type { TenantContext } from '../../context.ts';
import type { TemplateDeps } from './service.ts';
import { ConflictError, NotFoundError } from '../../errors.ts';
import type { TemplateDetail, TemplateTagView } from '../../../shared/schemas/templates.ts';
import type { TemplateTag } from './model.ts';
import { modelsOf } from '../models.ts';
import { detailOf, findTemplate, tagsOfTemplates, tagView } from './views.ts';

async function findTag(sequelize: Sequelize, tenantId: string, tagId: string): Promise<TemplateTag> {
  const tag = await modelsOf(sequelize).TemplateTag.findOne({ where: { id: tagId, tenantId } });
  if (!tag) throw new NotFoundError('Template tag');
  return tag;
}

export async function listTemplateTags(deps: TemplateDeps, ctx: TenantContext): Promise<TemplateTagView[]> {
  const tags = await modelsOf(deps.db.sequelize).TemplateTag.findAll({
    where: { tenantId: ctx.tenantId },
    order: [['name', 'ASC']],
  });
  return tags.map(tagView);
}

export async function createTemplateTag(
  deps: TemplateDeps,
  ctx: TenantContext,
  input: { name: string },
): Promise<TemplateTagView> {
  const { name } = input;
  try {
    return tagView(await modelsOf(deps.db.sequelize).TemplateTag.create({ tenantId: ctx.tenantId, name }));
  } catch (error) {
    if (error instanceof UniqueConstraintError)
      throw new ConflictError(`A template tag named "${name}" already exists.`, 'TAG_EXISTS');
    throw error;
  }
}

/** Deleting a tag detaches it from every template (the links cascade). */
export async function deleteTemplateTag(
  deps: TemplateDeps,
  ctx: TenantContext,
  input: { tagId: string },
): Promise<void> {
  const { tagId } = input;
  const tag = await findTag(deps.db.sequelize, ctx.tenantId, tagId);
  await tag.destroy();
}

export async function tagsOfTemplate(
  deps: TemplateDeps,
  ctx: TenantContext,
  input: { templateId: string },
): Promise<TemplateTagView[]> {
  const { templateId } = input;
  const template = await findTemplate(deps.db.sequelize, ctx.tenantId, templateId);
  return ((await tagsOfTemplates(deps.db.sequelize, [template.id])).get(template.id) ?? []).map(tagView);
}

/** Attaching a tag that is already attached changes nothing. */
export async function attachTemplateTag(
  deps: TemplateDeps,
  ctx: TenantContext,
  input: { templateId: string; tagId: string },
): Promise<TemplateDetail> {
  const { templateId, tagId } = input;
  const template = await findTemplate(deps.db.sequelize, ctx.tenantId, templateId);
  const tag = await findTag(deps.db.sequelize, ctx.tenantId, tagId);
  await modelsOf(deps.db.sequelize).TemplateTagLink.findOrCreate({ where: { templateId: template.id, tagId: tag.id } });
  return detailOf(deps.db.sequelize, template);
}

export async function detachTemplateTag(
  deps: TemplateDeps,
  ctx: TenantContext,
  input: { templateId: string; tagId: string },
): Promise<TemplateDetail> {
  const { templateId, tagId } = input;
  const template = await findTemplate(deps.db.sequelize, ctx.tenantId, templateId);
  const tag = await findTag(deps.db.sequelize, ctx.tenantId, tagId);
  await modelsOf(deps.db.sequelize).TemplateTagLink.destroy({ where: { templateId: template.id, tagId: tag.id } });
  return detailOf(deps.db.sequelize, template);
}
