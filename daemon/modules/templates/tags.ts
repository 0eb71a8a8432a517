// Template tags: a per-tenant catalogue of names, attached to templates many-to-many.
import { UniqueConstraintError } from 'sequelize';
import type { TenantContext } from '../../context.ts';
import type { TemplateDeps } from './service.ts';
import { ConflictError, NotFoundError } from '../../errors.ts';
import type { TemplateDetail, TemplateTagView } from '../../../shared/schemas/templates.ts';
import { TemplateTag, TemplateTagLink } from './model.ts';
import { detailOf, findTemplate, tagsOfTemplates, tagView } from './views.ts';

async function findTag(tenantId: string, tagId: string): Promise<TemplateTag> {
  const tag = await TemplateTag.findOne({ where: { id: tagId, tenantId } });
  if (!tag) throw new NotFoundError('Template tag');
  return tag;
}

export async function listTemplateTags(_deps: TemplateDeps, ctx: TenantContext): Promise<TemplateTagView[]> {
  const tags = await TemplateTag.findAll({ where: { tenantId: ctx.tenantId }, order: [['name', 'ASC']] });
  return tags.map(tagView);
}

export async function createTemplateTag(
  _deps: TemplateDeps,
  ctx: TenantContext,
  input: { name: string },
): Promise<TemplateTagView> {
  const { name } = input;
  try {
    return tagView(await TemplateTag.create({ tenantId: ctx.tenantId, name }));
  } catch (error) {
    if (error instanceof UniqueConstraintError)
      throw new ConflictError(`A template tag named "${name}" already exists.`, 'TAG_EXISTS');
    throw error;
  }
}

/** Deleting a tag detaches it from every template (the links cascade). */
export async function deleteTemplateTag(
  _deps: TemplateDeps,
  ctx: TenantContext,
  input: { tagId: string },
): Promise<void> {
  const { tagId } = input;
  const tag = await findTag(ctx.tenantId, tagId);
  await tag.destroy();
}

export async function tagsOfTemplate(
  _deps: TemplateDeps,
  ctx: TenantContext,
  input: { templateId: string },
): Promise<TemplateTagView[]> {
  const { templateId } = input;
  const template = await findTemplate(ctx.tenantId, templateId);
  return ((await tagsOfTemplates([template.id])).get(template.id) ?? []).map(tagView);
}

/** Attaching a tag that is already attached changes nothing. */
export async function attachTemplateTag(
  _deps: TemplateDeps,
  ctx: TenantContext,
  input: { templateId: string; tagId: string },
): Promise<TemplateDetail> {
  const { templateId, tagId } = input;
  const template = await findTemplate(ctx.tenantId, templateId);
  const tag = await findTag(ctx.tenantId, tagId);
  await TemplateTagLink.findOrCreate({ where: { templateId: template.id, tagId: tag.id } });
  return detailOf(template);
}

export async function detachTemplateTag(
  _deps: TemplateDeps,
  ctx: TenantContext,
  input: { templateId: string; tagId: string },
): Promise<TemplateDetail> {
  const { templateId, tagId } = input;
  const template = await findTemplate(ctx.tenantId, templateId);
  const tag = await findTag(ctx.tenantId, tagId);
  await TemplateTagLink.destroy({ where: { templateId: template.id, tagId: tag.id } });
  return detailOf(template);
}
