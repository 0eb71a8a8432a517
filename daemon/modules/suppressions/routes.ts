// Suppressions (spec §4 "Suppressions"): API key with suppressions:read / suppressions:write, or JWT.
import type { App, AppDeps } from '../../app-types.ts';
import { access } from '../../access.ts';
import { tenantOf } from '../../access.ts';
import { ErrorBody, IdParams, OkBody } from '../../../shared/schemas/common.ts';
import {
  CreateSuppressionBody,
  DeleteSuppressionQuery,
  Suppression,
  SuppressionsPage,
  SuppressionsQuery,
} from '../../../shared/schemas/suppressions.ts';
import { createSuppression, deleteSuppressionByEmail, deleteSuppressionById, listSuppressions } from './service.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody };

export default async function suppressionRoutes(app: App, deps: AppDeps): Promise<void> {
  const tags = ['suppressions'];
  const read = { access: access.keyOrSession('suppressions:read') };
  const write = { access: access.keyOrSession('suppressions:write') };

  app.get(
    '/suppressions',
    {
      config: read,
      schema: {
        tags,
        summary: 'List suppressed addresses, newest first; filter by email or reason',
        querystring: SuppressionsQuery,
        response: { 200: SuppressionsPage, ...errors },
      },
    },
    async (request) => listSuppressions(deps, tenantOf(request), request.query),
  );

  app.post(
    '/suppressions',
    {
      config: write,
      schema: {
        tags,
        summary: 'Suppress an address',
        body: CreateSuppressionBody,
        response: { 201: Suppression, ...errors, 409: ErrorBody },
      },
    },
    async (request, reply) => {
      const created = await createSuppression(deps, tenantOf(request), {
        email: request.body.email,
        reason: request.body.reason,
      });
      return reply.code(201).send(created);
    },
  );

  app.delete(
    '/suppressions',
    {
      config: write,
      schema: {
        tags,
        summary: 'Lift the suppression of an address',
        querystring: DeleteSuppressionQuery,
        response: { 200: OkBody, ...errors, 404: ErrorBody },
      },
    },
    async (request) => {
      await deleteSuppressionByEmail(deps, tenantOf(request), { email: request.query.email });
      return { ok: true as const };
    },
  );

  app.delete(
    '/suppressions/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Lift a suppression by id',
        params: IdParams,
        response: { 200: OkBody, ...errors, 404: ErrorBody },
      },
    },
    async (request) => {
      await deleteSuppressionById(deps, tenantOf(request), { id: request.params.id });
      return { ok: true as const };
    },
  );
}
