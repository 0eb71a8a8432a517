// Delivery shaping (platform admins only; docs/mta.md "Shaping and reactions"): provider rules,
// reaction rules and the reactions in force, per-tenant throttles.
import type { FastifyRequest } from 'fastify';
import type { App, ModuleDeps } from '../../app-types.ts';
import { access } from '../../plugins/access.ts';
import { adminIdOf } from '../../plugins/auth.ts';
import { ErrorBody } from '../../../shared/schemas/common.ts';
import {
  CreateProviderBody,
  ProviderParams,
  ProviderRuleBody,
  ProviderRulesBody,
  ReactionsBody,
  SetTenantThrottleBody,
  TenantThrottleBody,
  UpdateProviderBody,
} from '../../../shared/schemas/shaping.ts';
import { TenantParams } from '../../../shared/schemas/tenants.ts';
import {
  changeTenantThrottle,
  createProvider,
  listProviders,
  listReactions,
  readTenantThrottle,
  updateProvider,
} from './service.ts';

export default async function shapingRoutes(app: App, deps: ModuleDeps): Promise<void> {
  const tags = ['platform'];
  const config = { access: access.session({ tenant: false, platformAdmin: true }) };
  const errors = { 401: ErrorBody, 403: ErrorBody };
  const actor = (request: FastifyRequest) => ({ adminId: adminIdOf(request), ip: request.ip });

  app.get(
    '/platform/providers',
    {
      config,
      schema: {
        tags,
        summary: 'Provider shaping rules in match order: connections, messages per connection, rate (platform admins)',
        response: { 200: ProviderRulesBody, ...errors },
      },
    },
    async () => listProviders(deps),
  );

  app.post(
    '/platform/providers',
    {
      config,
      schema: {
        tags,
        summary: 'Add a provider matched by its MX host names, before the shipped ones (platform admins)',
        body: CreateProviderBody,
        response: { 201: ProviderRuleBody, 400: ErrorBody, 409: ErrorBody, ...errors },
      },
    },
    async (request, reply) => reply.code(201).send(await createProvider(deps, actor(request), request.body)),
  );

  app.put(
    '/platform/providers/:key',
    {
      config,
      schema: {
        tags,
        summary:
          "Change a provider's rule: the fields given replace theirs, the loops reload at once (platform admins)",
        params: ProviderParams,
        body: UpdateProviderBody,
        response: { 200: ProviderRuleBody, 400: ErrorBody, 404: ErrorBody, ...errors },
      },
    },
    async (request) => updateProvider(deps, actor(request), { key: request.params.key, changes: request.body }),
  );

  app.get(
    '/platform/reactions',
    {
      config,
      schema: {
        tags,
        summary:
          "Reaction rules on providers' replies, and the suspensions, slow-downs and pauses in force (platform admins)",
        response: { 200: ReactionsBody, ...errors },
      },
    },
    async () => listReactions(deps),
  );

  app.get(
    '/platform/tenants/:tenantId/throttle',
    {
      config,
      schema: {
        tags,
        summary: "A tenant's delivery throttle, messages a second and an hour (platform admins)",
        params: TenantParams,
        response: { 200: TenantThrottleBody, 404: ErrorBody, ...errors },
      },
    },
    async (request) => readTenantThrottle(deps, { tenantId: request.params.tenantId }),
  );

  app.put(
    '/platform/tenants/:tenantId/throttle',
    {
      config,
      schema: {
        tags,
        summary: "Set a tenant's delivery throttle; null lifts a limit (platform admins)",
        params: TenantParams,
        body: SetTenantThrottleBody,
        response: { 200: TenantThrottleBody, 400: ErrorBody, 404: ErrorBody, ...errors },
      },
    },
    async (request) =>
      changeTenantThrottle(deps, actor(request), { tenantId: request.params.tenantId, throttle: request.body }),
  );
}
