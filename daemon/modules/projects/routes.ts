// Projects (spec §4 "Projects"): API key with projects:read / projects:write, or JWT.
import { Type } from '@sinclair/typebox';
import type { App, AppDeps } from '../../app-types.ts';
import { access } from '../../access.ts';
import { tenantOf } from '../../access.ts';
import { ErrorBody, IdParams, OkBody } from '../../../shared/schemas/common.ts';
import { CreateProjectBody, Project, UpdateProjectBody, VerifySmtpResult } from '../../../shared/schemas/projects.ts';
import { createProject, deleteProject, getProject, listProjects, updateProject, verifyProjectSmtp } from './service.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody };
const notFound = { ...errors, 404: ErrorBody };

export default async function projectRoutes(app: App, deps: AppDeps): Promise<void> {
  const tags = ['projects'];
  const read = { access: access.keyOrSession('projects:read') };
  const write = { access: access.keyOrSession('projects:write') };

  app.get(
    '/projects',
    {
      config: read,
      schema: { tags, summary: "List the tenant's projects", response: { 200: Type.Array(Project), ...errors } },
    },
    async (request) => listProjects(deps, tenantOf(request)),
  );

  app.post(
    '/projects',
    {
      config: write,
      schema: {
        tags,
        summary: 'Create a project, optionally with its own SMTP relay',
        body: CreateProjectBody,
        response: { 201: Project, ...errors },
      },
    },
    async (request, reply) => reply.code(201).send(await createProject(deps, tenantOf(request), request.body)),
  );

  app.get(
    '/projects/:id',
    {
      config: read,
      schema: {
        tags,
        summary: 'One project (the SMTP password is never shown)',
        params: IdParams,
        response: { 200: Project, ...notFound },
      },
    },
    async (request) => getProject(deps, tenantOf(request), { id: request.params.id }),
  );

  app.patch(
    '/projects/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Rename a project or change its SMTP relay (smtp: null removes it)',
        params: IdParams,
        body: UpdateProjectBody,
        response: { 200: Project, ...notFound },
      },
    },
    async (request) => updateProject(deps, tenantOf(request), { id: request.params.id, body: request.body }),
  );

  app.delete(
    '/projects/:id',
    {
      config: write,
      schema: { tags, summary: 'Delete a project', params: IdParams, response: { 200: OkBody, ...notFound } },
    },
    async (request) => {
      await deleteProject(deps, tenantOf(request), { id: request.params.id });
      return { ok: true as const };
    },
  );

  app.post(
    '/projects/:id/verify-smtp',
    {
      config: write,
      schema: {
        tags,
        summary: "Check the project's SMTP settings with a real handshake (connect, EHLO, TLS, AUTH)",
        params: IdParams,
        response: { 200: VerifySmtpResult, ...notFound },
      },
    },
    async (request) => verifyProjectSmtp(deps, tenantOf(request), { id: request.params.id }),
  );
}
