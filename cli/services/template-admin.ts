// Template chores beside the files workflow of template-files.ts: rename, delete, duplicate, unpublish,
// and template tags (named by the person, addressed by id in the API).
import type { SvcClient } from '../client.ts';
import { CliFailure, EXIT } from '../errors.ts';
import type {
  TemplateDetail,
  TemplateTagView,
  TemplateVersionView,
  UpdateTemplateBody,
} from '../../shared/schemas/templates.ts';

const id = (value: string) => encodeURIComponent(value);
const versionPath = (templateId: string, versionId: string) => `/templates/${id(templateId)}/versions/${id(versionId)}`;

export const templateAdmin = {
  update: (client: SvcClient, templateId: string, changes: UpdateTemplateBody) =>
    client.http.request<TemplateDetail>('PATCH', `/templates/${id(templateId)}`, { json: changes }),
  remove: (client: SvcClient, templateId: string) =>
    client.http.request<unknown>('DELETE', `/templates/${id(templateId)}`),
  duplicate: (client: SvcClient, templateId: string) =>
    client.http.request<TemplateDetail>('POST', `/templates/${id(templateId)}/duplicate`),
  unpublish: (client: SvcClient, templateId: string, versionId: string) =>
    client.http.request<TemplateVersionView>('POST', `${versionPath(templateId, versionId)}/unpublish`),
  removeVersion: (client: SvcClient, templateId: string, versionId: string) =>
    client.http.request<unknown>('DELETE', versionPath(templateId, versionId)),
};

export const templateTags = {
  list: (client: SvcClient) => client.http.request<TemplateTagView[]>('GET', '/templates/tags'),
  create: (client: SvcClient, name: string) =>
    client.http.request<TemplateTagView>('POST', '/templates/tags', { json: { name } }),
  remove: (client: SvcClient, tagId: string) => client.http.request<unknown>('DELETE', `/templates/tags/${id(tagId)}`),
  ofTemplate: (client: SvcClient, templateId: string) =>
    client.http.request<TemplateTagView[]>('GET', `/templates/${id(templateId)}/tags`),
  attach: (client: SvcClient, templateId: string, tagId: string) =>
    client.http.request<TemplateDetail>('POST', `/templates/${id(templateId)}/tags/${id(tagId)}`),
  detach: (client: SvcClient, templateId: string, tagId: string) =>
    client.http.request<unknown>('DELETE', `/templates/${id(templateId)}/tags/${id(tagId)}`),
};

/** A template tag by name (or id). */
export async function requireTemplateTag(client: SvcClient, nameOrId: string): Promise<TemplateTagView> {
  const tag = (await templateTags.list(client)).find((t) => t.name === nameOrId || t.id === nameOrId);
  if (!tag)
    throw new CliFailure(`No template tag "${nameOrId}": see \`svc templates tags list\`.`, EXIT.refused, 'NOT_FOUND');
  return tag;
}

/** The version a command names: --version N, else the newest of --locale (or of any locale). */
export function pickVersion(template: TemplateDetail, number?: number, locale?: string): TemplateVersionView {
  const candidates = template.versions.filter((v) => (number ? v.version === number : !locale || v.locale === locale));
  const version = candidates.sort((a, b) => b.version - a.version)[0];
  if (!version)
    throw new CliFailure(
      `Template ${template.slug} has no such version: see \`svc templates show ${template.slug}\`.`,
      EXIT.refused,
      'NOT_FOUND',
    );
  return version;
}
