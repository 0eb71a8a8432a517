// Sending domains (JWT only): register, list, DNS records and their state, verify, diagnose, delete.
import type { App, ModuleDeps } from '../../app-types.ts';
import { access } from '../../access.ts';
import { tenantOf } from '../../access.ts';
import { ErrorBody, IdParams, OkBody, PageQuery, Paged, TenantHeaders } from '../../../shared/schemas/common.ts';
import { CreateDomainDto, DiagnosisBody, DomainBody, VerifyDomainBody } from '../../../shared/schemas/domains.ts';
import { createDomain, deleteDomain, diagnoseDomain, getDomainDns, listDomains, verifyDomain } from './service.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };

export default async function domainRoutes(app: App, deps: ModuleDeps): Promise<void> {
  const tags = ['domains'];
  const session = { access: access.session() };

  app.post(
    '/domains',
    {
      config: session,
      schema: {
        tags,
        summary: 'Register a sending domain: generates its DKIM key and answers the DNS records to publish',
        headers: TenantHeaders,
        body: CreateDomainDto,
        response: { 201: DomainBody, ...errors, 409: ErrorBody },
      },
    },
    async (request, reply) => reply.code(201).send(await createDomain(deps, tenantOf(request), request.body)),
  );

  app.get(
    '/domains',
    {
      // Extension: an API key with domains:read may list them too (CI checks of a template's From).
      config: { access: access.keyOrSession('domains:read') },
      schema: {
        tags,
        summary: "The tenant's sending domains",
        headers: TenantHeaders,
        querystring: PageQuery(),
        response: { 200: Paged(DomainBody), ...errors },
      },
    },
    async (request) =>
      listDomains(deps, tenantOf(request), { page: request.query.page ?? 1, limit: request.query.limit ?? 20 }),
  );

  app.get(
    '/domains/:id/dns',
    {
      config: session,
      schema: {
        tags,
        summary: 'The records to publish, each with its state at the last verification',
        headers: TenantHeaders,
        params: IdParams,
        response: { 200: DomainBody, ...errors },
      },
    },
    async (request) => getDomainDns(deps, tenantOf(request), { id: request.params.id }),
  );

  app.post(
    '/domains/:id/verify',
    {
      config: session,
      schema: {
        tags,
        summary: "Look the records up in DNS and store each one's state; verified when SPF and DKIM pass",
        headers: TenantHeaders,
        params: IdParams,
        response: { 200: VerifyDomainBody, ...errors },
      },
    },
    async (request) => verifyDomain(deps, tenantOf(request), { id: request.params.id }),
  );

  app.get(
    '/domains/:id/diagnose',
    {
      config: session,
      schema: {
        tags,
        summary: 'Report DNS problems (SPF, DKIM, DMARC, return path) and the records to publish; writes nothing',
        headers: TenantHeaders,
        params: IdParams,
        response: { 200: DiagnosisBody, ...errors },
      },
    },
    async (request) => diagnoseDomain(deps, tenantOf(request), { id: request.params.id }),
  );

  app.delete(
    '/domains/:id',
    {
      config: session,
      schema: {
        tags,
        summary: 'Remove a sending domain and its DKIM key',
        headers: TenantHeaders,
        params: IdParams,
        response: { 200: OkBody, ...errors },
      },
    },
    async (request) => {
      await deleteDomain(deps, tenantOf(request), { id: request.params.id });
      return { ok: true as const };
    },
  );
}
