// Templates: list with filters, create (with its first version), read, update, delete, duplicate.
// Versions live in versions.ts, tags in tags.ts, rendering in render.ts.
import { Op, UniqueConstraintError, type WhereOptions } from 'sequelize';
import type { Sequelize } from 'sequelize';
import type { AppDeps } from '../../app-types.ts';
import type { TenantContext } from '../../context.ts';
import { ConflictError, UnprocessableError, ValidationError } from '../../errors.ts';
import { parseMailbox } from '../../mail/mailboxes.ts';
import { projectExists } from '../projects/service.ts';
import type {
  CreateTemplateBody,
  TemplateDetail,
  TemplateListQuery,
  UpdateTemplateBody,
} from '../../../shared/schemas/templates.ts';
import type { Template, TemplateVersion } from './model.ts';
import { modelsOf } from '../models.ts';
import { checkVersionContent } from './content.ts';
import { detailOf, findTemplate, summariesOf } from './views.ts';
import { findPage } from '../../db/paging.ts';

export const DEFAULT_TEMPLATE_LOCALE = 'en';

/** A template's sender is one mailbox, as a send's `from` is (its domain is checked when a send uses it). */
function checkedTemplateFrom(from: string): string {
  if (!parseMailbox(from))
    throw new ValidationError('from is not one e-mail address.', [
      { field: 'from', message: 'must be one address, `a@b` or `Name <a@b>`' },
    ]);
  return from;
}

function slugTaken(slug: string): ConflictError {
  return new ConflictError(`A template with slug "${slug}" already exists in this tenant.`, 'SLUG_TAKEN');
}

async function checkProject(
  sequelize: Sequelize,
  tenantId: string,
  projectId: string | null | undefined,
): Promise<void> {
  if (projectId && !(await projectExists(sequelize, tenantId, projectId))) {
    throw new UnprocessableError(`projectId ${projectId} names no project of this tenant.`, 'UNKNOWN_PROJECT');
  }
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** What the template services take: the connection their models are bound to. */
export type TemplateDeps = Pick<AppDeps, 'db'>;

export async function listTemplates(deps: TemplateDeps, ctx: TenantContext, query: TemplateListQuery) {
  const { sequelize } = deps.db;
  const { Template } = modelsOf(sequelize);
  const where: WhereOptions<Template>[] = [{ tenantId: ctx.tenantId }];
  if (query.projectId) where.push({ projectId: query.projectId });
  if (query.editorMode) where.push({ editorMode: query.editorMode });
  if (query.search) {
    const pattern = `%${escapeLike(query.search)}%`;
    where.push({ [Op.or]: [{ name: { [Op.iLike]: pattern } }, { slug: { [Op.iLike]: pattern } }] });
  }
  if (query.status) {
    const publishedIds = sequelize.literal(
      `(SELECT template_id FROM template_versions WHERE published_at IS NOT NULL AND tenant_id = ${sequelize.escape(ctx.tenantId)})`,
    );
    where.push({ id: query.status === 'published' ? { [Op.in]: publishedIds } : { [Op.notIn]: publishedIds } });
  }
  return findPage(
    Template,
    {
      where: { [Op.and]: where },
      order: [
        ['createdAt', 'DESC'],
        ['id', 'ASC'],
      ],
    },
    query,
    (rows) => summariesOf(sequelize, rows),
  );
}

export async function createTemplate(
  deps: TemplateDeps,
  ctx: TenantContext,
  body: CreateTemplateBody,
): Promise<TemplateDetail> {
  const content = {
    subject: body.subject,
    htmlBody: body.htmlBody ?? null,
    textBody: body.textBody ?? null,
    jsx: body.jsx ?? null,
  };
  await checkVersionContent(body.editorMode, content);
  await checkProject(deps.db.sequelize, ctx.tenantId, body.projectId);
  const locale = body.locale ?? DEFAULT_TEMPLATE_LOCALE;
  const { sequelize } = deps.db;
  const { Template, TemplateVersion } = modelsOf(sequelize);
  try {
    const template = await sequelize.transaction(async (transaction) => {
      const created = await Template.create(
        {
          tenantId: ctx.tenantId,
          projectId: body.projectId ?? null,
          name: body.name,
          slug: body.slug,
          editorMode: body.editorMode,
          defaultLocale: locale,
          defaultFrom: body.from === undefined ? null : checkedTemplateFrom(body.from),
          createdBy: ctx.adminId,
        },
        { transaction },
      );
      await TemplateVersion.create(
        { tenantId: ctx.tenantId, templateId: created.id, version: 1, locale, ...content, createdBy: ctx.adminId },
        { transaction },
      );
      return created;
    });
    return detailOf(sequelize, template);
  } catch (error) {
    if (error instanceof UniqueConstraintError) throw slugTaken(body.slug);
    throw error;
  }
}

export async function getTemplate(
  deps: TemplateDeps,
  ctx: TenantContext,
  input: { id: string },
): Promise<TemplateDetail> {
  const { id } = input;
  return detailOf(deps.db.sequelize, await findTemplate(deps.db.sequelize, ctx.tenantId, id));
}

export async function updateTemplate(
  deps: TemplateDeps,
  ctx: TenantContext,
  input: { id: string; body: UpdateTemplateBody },
): Promise<TemplateDetail> {
  const { id, body } = input;
  const template = await findTemplate(deps.db.sequelize, ctx.tenantId, id);
  await checkProject(deps.db.sequelize, ctx.tenantId, body.projectId);
  try {
    await template.update({
      ...(body.name !== undefined ? { name: body.name } : {}),
      ...(body.slug !== undefined ? { slug: body.slug } : {}),
      ...(body.projectId !== undefined ? { projectId: body.projectId } : {}),
      ...(body.defaultLocale !== undefined ? { defaultLocale: body.defaultLocale } : {}),
      ...(body.from !== undefined ? { defaultFrom: body.from === null ? null : checkedTemplateFrom(body.from) } : {}),
    });
  } catch (error) {
    if (error instanceof UniqueConstraintError) throw slugTaken(body.slug ?? template.slug);
    throw error;
  }
  return detailOf(deps.db.sequelize, template);
}

export async function deleteTemplate(deps: TemplateDeps, ctx: TenantContext, input: { id: string }): Promise<void> {
  const { id } = input;
  const template = await findTemplate(deps.db.sequelize, ctx.tenantId, id);
  await template.destroy();
}

async function freeCopySlug(sequelize: Sequelize, tenantId: string, slug: string): Promise<string> {
  const base = `${slug.slice(0, 90)}-copy`;
  const taken = new Set(
    (
      await modelsOf(sequelize).Template.findAll({
        where: { tenantId, slug: { [Op.like]: `${escapeLike(base)}%` } },
        attributes: ['slug'],
      })
    ).map((t) => t.slug),
  );
  if (!taken.has(base)) return base;
  for (let n = 2; ; n += 1) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

/** A new draft template: same settings and tags, the latest version of each locale as version 1, 2 … */
export async function duplicateTemplate(
  deps: TemplateDeps,
  ctx: TenantContext,
  input: { id: string },
): Promise<TemplateDetail> {
  const { id } = input;
  const { sequelize } = deps.db;
  const { Template, TemplateTagLink, TemplateVersion } = modelsOf(sequelize);
  const source = await findTemplate(sequelize, ctx.tenantId, id);
  const versions = await TemplateVersion.findAll({
    where: { templateId: source.id, tenantId: ctx.tenantId },
    order: [['version', 'DESC']],
  });
  const latestPerLocale = new Map<string, TemplateVersion>();
  for (const v of versions) if (!latestPerLocale.has(v.locale)) latestPerLocale.set(v.locale, v);
  const links = await TemplateTagLink.findAll({ where: { templateId: source.id } });
  // Outside the transaction: the embedded database has a single connection, which the transaction holds.
  const slug = await freeCopySlug(sequelize, ctx.tenantId, source.slug);
  const copy = await sequelize.transaction(async (transaction) => {
    const created = await Template.create(
      {
        tenantId: ctx.tenantId,
        projectId: source.projectId,
        name: `${source.name} (copy)`.slice(0, 200),
        slug,
        editorMode: source.editorMode,
        defaultLocale: source.defaultLocale,
        defaultFrom: source.defaultFrom,
        createdBy: ctx.adminId,
      },
      { transaction },
    );
    let number = 0;
    for (const v of [...latestPerLocale.values()].sort((a, b) => a.version - b.version)) {
      number += 1;
      await TemplateVersion.create(
        {
          tenantId: ctx.tenantId,
          templateId: created.id,
          version: number,
          locale: v.locale,
          subject: v.subject,
          htmlBody: v.htmlBody,
          textBody: v.textBody,
          jsx: v.jsx,
          createdBy: ctx.adminId,
        },
        { transaction },
      );
    }
    for (const link of links)
      await TemplateTagLink.create({ templateId: created.id, tagId: link.tagId }, { transaction });
    return created;
  });
  return detailOf(sequelize, copy);
}
