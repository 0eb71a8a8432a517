// Rows → the JSON shapes of shared/schemas/templates.ts, and the look-ups every template service
// needs (always scoped to the tenant: another tenant's row is simply not found).
import { Op, type Sequelize } from 'sequelize';
import { NotFoundError } from '../../errors.ts';
import type {
  TemplateDetail,
  TemplateSummary,
  TemplateTagView,
  TemplateVersionView,
} from '../../../shared/schemas/templates.ts';
import type { Template, TemplateTag, TemplateVersion } from './model.ts';
import { modelsOf } from '../models.ts';

export function versionView(version: TemplateVersion): TemplateVersionView {
  return {
    id: version.id,
    templateId: version.templateId,
    version: version.version,
    locale: version.locale,
    subject: version.subject,
    htmlBody: version.htmlBody ?? null,
    textBody: version.textBody ?? null,
    jsx: version.jsx ?? null,
    published: version.publishedAt !== null,
    publishedAt: version.publishedAt ? version.publishedAt.toISOString() : null,
    createdAt: version.createdAt.toISOString(),
    updatedAt: version.updatedAt.toISOString(),
  };
}

export function tagView(tag: TemplateTag): TemplateTagView {
  return { id: tag.id, name: tag.name, createdAt: tag.createdAt.toISOString() };
}

interface VersionFacts {
  latestVersion: number;
  publishedLocales: string[];
}

export function summaryView(template: Template, facts: VersionFacts, tags: TemplateTag[]): TemplateSummary {
  return {
    id: template.id,
    name: template.name,
    slug: template.slug,
    editorMode: template.editorMode,
    projectId: template.projectId ?? null,
    defaultLocale: template.defaultLocale,
    from: template.defaultFrom ?? null,
    status: facts.publishedLocales.length > 0 ? 'published' : 'draft',
    publishedLocales: [...facts.publishedLocales].sort(),
    latestVersion: facts.latestVersion,
    tags: tags.map(tagView),
    createdAt: template.createdAt.toISOString(),
    updatedAt: template.updatedAt.toISOString(),
  };
}

export async function findTemplate(sequelize: Sequelize, tenantId: string, id: string): Promise<Template> {
  const template = await modelsOf(sequelize).Template.findOne({ where: { id, tenantId } });
  if (!template) throw new NotFoundError('Template');
  return template;
}

export async function findVersion(
  sequelize: Sequelize,
  tenantId: string,
  templateId: string,
  versionId: string,
): Promise<TemplateVersion> {
  const version = await modelsOf(sequelize).TemplateVersion.findOne({ where: { id: versionId, templateId, tenantId } });
  if (!version) throw new NotFoundError('Template version');
  return version;
}

export async function tagsOfTemplates(
  sequelize: Sequelize,
  templateIds: string[],
): Promise<Map<string, TemplateTag[]>> {
  const { TemplateTag, TemplateTagLink } = modelsOf(sequelize);
  const byTemplate = new Map<string, TemplateTag[]>(templateIds.map((id) => [id, []]));
  if (templateIds.length === 0) return byTemplate;
  const links = await TemplateTagLink.findAll({ where: { templateId: { [Op.in]: templateIds } } });
  const tags = links.length
    ? await TemplateTag.findAll({ where: { id: { [Op.in]: links.map((l) => l.tagId) } }, order: [['name', 'ASC']] })
    : [];
  const tagById = new Map(tags.map((t) => [t.id, t]));
  for (const link of links) {
    const tag = tagById.get(link.tagId);
    if (tag) byTemplate.get(link.templateId)?.push(tag);
  }
  for (const list of byTemplate.values()) list.sort((a, b) => a.name.localeCompare(b.name));
  return byTemplate;
}

export async function versionFacts(sequelize: Sequelize, templateIds: string[]): Promise<Map<string, VersionFacts>> {
  const facts = new Map<string, VersionFacts>(
    templateIds.map((id) => [id, { latestVersion: 0, publishedLocales: [] }]),
  );
  if (templateIds.length === 0) return facts;
  const rows = await modelsOf(sequelize).TemplateVersion.findAll({
    where: { templateId: { [Op.in]: templateIds } },
    attributes: ['templateId', 'version', 'locale', 'publishedAt'],
  });
  for (const row of rows) {
    const fact = facts.get(row.templateId);
    if (!fact) continue;
    fact.latestVersion = Math.max(fact.latestVersion, row.version);
    if (row.publishedAt) fact.publishedLocales.push(row.locale);
  }
  return facts;
}

export async function summariesOf(sequelize: Sequelize, templates: Template[]): Promise<TemplateSummary[]> {
  const ids = templates.map((t) => t.id);
  const [facts, tags] = await Promise.all([versionFacts(sequelize, ids), tagsOfTemplates(sequelize, ids)]);
  return templates.map((t) =>
    summaryView(t, facts.get(t.id) ?? { latestVersion: 0, publishedLocales: [] }, tags.get(t.id) ?? []),
  );
}

export async function detailOf(sequelize: Sequelize, template: Template): Promise<TemplateDetail> {
  const [summary] = await summariesOf(sequelize, [template]);
  const versions = await modelsOf(sequelize).TemplateVersion.findAll({
    where: { templateId: template.id, tenantId: template.tenantId },
    order: [['version', 'DESC']],
  });
  return { ...summary, versions: versions.map(versionView) };
}
