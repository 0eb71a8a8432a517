// Templates (spec §4 "Templates"): JWT, except GET /templates, which an API key with
// templates:read may call too, and (extension) the template and version writes, reads and preview a
// CI pipeline needs to keep templates as code, which an API key with templates:write may call.
// Static paths (/templates/tags, /templates/render-react-email) win
// over /templates/:id in Fastify's router, whatever the order of registration.
import { Type } from '@sinclair/typebox';
import type { App, ModuleDeps } from '../../app-types.ts';
import { access } from '../../access.ts';
import { tenantOf } from '../../access.ts';
import { ErrorBody, OkBody } from '../../../shared/schemas/common.ts';
import {
  CreateTemplateBody,
  CreateTemplateTagBody,
  CreateVersionBody,
  PreviewBody,
  RenderedEmail,
  RenderedMessage,
  RenderReactEmailBody,
  TagParams,
  TemplateDetail,
  TemplateIdParams,
  TemplateListQuery,
  TemplatePage,
  TemplateTagParams,
  TemplateTagView,
  TemplateVersionView,
  UpdateTemplateBody,
  UpdateVersionBody,
  VersionParams,
} from '../../../shared/schemas/templates.ts';
import {
  createTemplate,
  deleteTemplate,
  duplicateTemplate,
  getTemplate,
  listTemplates,
  updateTemplate,
} from './service.ts';
import {
  createVersion,
  deleteVersion,
  getVersion,
  previewVersion,
  publishVersion,
  unpublishVersion,
  updateVersion,
} from './versions.ts';
import {
  attachTemplateTag,
  createTemplateTag,
  deleteTemplateTag,
  detachTemplateTag,
  listTemplateTags,
  tagsOfTemplate,
} from './tags.ts';
import { renderReactEmail } from './render.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody };
const notFound = { ...errors, 404: ErrorBody };
const conflict = { ...notFound, 409: ErrorBody };
const unprocessable = { ...notFound, 422: ErrorBody };

/** A version's two bodies (Liquid parses 500,000 characters of each) and JSX (200,000), up to 3 bytes a character. */
const TEMPLATE_BODY_LIMIT_BYTES = 4 * 1024 * 1024;
/** A render of JSX (200,000 characters) with its props, or a preview's data. */
const RENDER_BODY_LIMIT_BYTES = 1024 * 1024;

export default async function templateRoutes(app: App, deps: ModuleDeps): Promise<void> {
  const tags = ['templates'];
  const session = { access: access.session() };
  const sessionOrWriteKey = { access: access.keyOrSession('templates:write') };

  app.post(
    '/templates/render-react-email',
    {
      config: sessionOrWriteKey,
      bodyLimit: RENDER_BODY_LIMIT_BYTES,
      schema: {
        tags,
        summary:
          'Render JSX + props to HTML and text in the sandbox (2 s, 64 MB; imports: react, @react-email/components); nothing is stored',
        body: RenderReactEmailBody,
        response: { 200: RenderedEmail, ...errors, 422: ErrorBody, 503: ErrorBody },
      },
    },
    async (request) => renderReactEmail(deps.reactEmailSandbox, request.body.jsx, request.body.props ?? {}),
  );

  app.post(
    '/templates',
    {
      config: sessionOrWriteKey,
      bodyLimit: TEMPLATE_BODY_LIMIT_BYTES,
      schema: {
        tags,
        summary: 'Create a template and its first version (slug unique per tenant)',
        body: CreateTemplateBody,
        response: { 201: TemplateDetail, ...errors, 409: ErrorBody, 422: ErrorBody },
      },
    },
    async (request, reply) => reply.code(201).send(await createTemplate(deps, tenantOf(request), request.body)),
  );

  app.get(
    '/templates',
    {
      config: { access: access.keyOrSession('templates:read') },
      schema: {
        tags,
        summary: 'List templates; filter by search (name or slug), projectId, status, editorMode',
        querystring: TemplateListQuery,
        response: { 200: TemplatePage, ...errors },
      },
    },
    async (request) => listTemplates(deps, tenantOf(request), request.query),
  );

  app.get(
    '/templates/tags',
    {
      config: session,
      schema: {
        tags,
        summary: "The tenant's template tags",
        response: { 200: Type.Array(TemplateTagView), ...errors },
      },
    },
    async (request) => listTemplateTags(deps, tenantOf(request)),
  );

  app.post(
    '/templates/tags',
    {
      config: session,
      schema: {
        tags,
        summary: 'Create a template tag',
        body: CreateTemplateTagBody,
        response: { 201: TemplateTagView, ...errors, 409: ErrorBody },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createTemplateTag(deps, tenantOf(request), { name: request.body.name })),
  );

  app.delete(
    '/templates/tags/:tagId',
    {
      config: session,
      schema: {
        tags,
        summary: 'Delete a template tag (it is detached from every template)',
        params: TagParams,
        response: { 200: OkBody, ...notFound },
      },
    },
    async (request) => {
      await deleteTemplateTag(deps, tenantOf(request), { tagId: request.params.tagId });
      return { ok: true as const };
    },
  );

  app.get(
    '/templates/:id',
    {
      config: sessionOrWriteKey,
      schema: {
        tags,
        summary: 'A template with all its versions, newest first',
        params: TemplateIdParams,
        response: { 200: TemplateDetail, ...notFound },
      },
    },
    async (request) => getTemplate(deps, tenantOf(request), { id: request.params.id }),
  );

  app.patch(
    '/templates/:id',
    {
      config: sessionOrWriteKey,
      schema: {
        tags,
        summary: 'Rename, change slug, project or default locale',
        params: TemplateIdParams,
        body: UpdateTemplateBody,
        response: { 200: TemplateDetail, ...conflict, 422: ErrorBody },
      },
    },
    async (request) => updateTemplate(deps, tenantOf(request), { id: request.params.id, body: request.body }),
  );

  app.delete(
    '/templates/:id',
    {
      config: session,
      schema: {
        tags,
        summary: 'Delete a template, its versions and its tag links',
        params: TemplateIdParams,
        response: { 200: OkBody, ...notFound },
      },
    },
    async (request) => {
      await deleteTemplate(deps, tenantOf(request), { id: request.params.id });
      return { ok: true as const };
    },
  );

  app.post(
    '/templates/:id/duplicate',
    {
      config: session,
      schema: {
        tags,
        summary: 'Copy a template as a draft: slug "<slug>-copy", the latest version of each locale, the same tags',
        params: TemplateIdParams,
        response: { 201: TemplateDetail, ...notFound },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await duplicateTemplate(deps, tenantOf(request), { id: request.params.id })),
  );

  app.post(
    '/templates/:id/versions',
    {
      config: sessionOrWriteKey,
      schema: {
        tags,
        summary: 'Create a draft version, a copy of the latest (optionally for another locale)',
        params: TemplateIdParams,
        body: CreateVersionBody,
        response: { 201: TemplateVersionView, ...notFound },
      },
    },
    async (request, reply) =>
      reply.code(201).send(
        await createVersion(deps, tenantOf(request), {
          templateId: request.params.id,
          body: request.body ?? undefined,
        }),
      ),
  );

  app.get(
    '/templates/:id/versions/:versionId',
    {
      config: sessionOrWriteKey,
      schema: {
        tags,
        summary: 'One version',
        params: VersionParams,
        response: { 200: TemplateVersionView, ...notFound },
      },
    },
    async (request) =>
      getVersion(deps, tenantOf(request), { templateId: request.params.id, versionId: request.params.versionId }),
  );

  app.patch(
    '/templates/:id/versions/:versionId',
    {
      config: sessionOrWriteKey,
      bodyLimit: TEMPLATE_BODY_LIMIT_BYTES,
      schema: {
        tags,
        summary: 'Edit a draft version (a published one is frozen: 409)',
        params: VersionParams,
        body: UpdateVersionBody,
        response: { 200: TemplateVersionView, ...conflict, 422: ErrorBody },
      },
    },
    async (request) =>
      updateVersion(deps, tenantOf(request), {
        templateId: request.params.id,
        versionId: request.params.versionId,
        body: request.body,
      }),
  );

  app.delete(
    '/templates/:id/versions/:versionId',
    {
      config: session,
      schema: {
        tags,
        summary: 'Delete a draft version (not the published one, not the only one: 409)',
        params: VersionParams,
        response: { 200: OkBody, ...conflict },
      },
    },
    async (request) => {
      await deleteVersion(deps, tenantOf(request), {
        templateId: request.params.id,
        versionId: request.params.versionId,
      });
      return { ok: true as const };
    },
  );

  app.post(
    '/templates/:id/versions/:versionId/publish',
    {
      config: sessionOrWriteKey,
      schema: {
        tags,
        summary: 'Publish a version; the version published before it for the same locale is unpublished',
        params: VersionParams,
        response: { 201: TemplateVersionView, ...unprocessable },
      },
    },
    async (request, reply) =>
      reply.code(201).send(
        await publishVersion(deps, tenantOf(request), {
          templateId: request.params.id,
          versionId: request.params.versionId,
        }),
      ),
  );

  app.post(
    '/templates/:id/versions/:versionId/unpublish',
    {
      config: sessionOrWriteKey,
      schema: {
        tags,
        summary: 'Unpublish a version (no effect if it is not published)',
        params: VersionParams,
        response: { 201: TemplateVersionView, ...notFound },
      },
    },
    async (request, reply) =>
      reply.code(201).send(
        await unpublishVersion(deps, tenantOf(request), {
          templateId: request.params.id,
          versionId: request.params.versionId,
        }),
      ),
  );

  app.post(
    '/templates/:id/versions/:versionId/preview',
    {
      config: sessionOrWriteKey,
      bodyLimit: RENDER_BODY_LIMIT_BYTES,
      schema: {
        tags,
        summary: 'Render a version with the given data; nothing is sent',
        params: VersionParams,
        body: PreviewBody,
        response: { 200: RenderedMessage, ...unprocessable, 503: ErrorBody },
      },
    },
    async (request) =>
      previewVersion(deps, tenantOf(request), {
        templateId: request.params.id,
        versionId: request.params.versionId,
        data: request.body?.data ?? {},
      }),
  );

  app.get(
    '/templates/:id/tags',
    {
      config: session,
      schema: {
        tags,
        summary: 'Tags attached to a template',
        params: TemplateIdParams,
        response: { 200: Type.Array(TemplateTagView), ...notFound },
      },
    },
    async (request) => tagsOfTemplate(deps, tenantOf(request), { templateId: request.params.id }),
  );

  app.post(
    '/templates/:id/tags/:tagId',
    {
      config: session,
      schema: {
        tags,
        summary: 'Attach a tag to a template',
        params: TemplateTagParams,
        response: { 200: TemplateDetail, ...notFound },
      },
    },
    async (request) =>
      attachTemplateTag(deps, tenantOf(request), { templateId: request.params.id, tagId: request.params.tagId }),
  );

  app.delete(
    '/templates/:id/tags/:tagId',
    {
      config: session,
      schema: {
        tags,
        summary: 'Detach a tag from a template',
        params: TemplateTagParams,
        response: { 200: TemplateDetail, ...notFound },
      },
    },
    async (request) =>
      detachTemplateTag(deps, tenantOf(request), { templateId: request.params.id, tagId: request.params.tagId }),
  );
}
