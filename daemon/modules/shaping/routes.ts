// Delivery shaping (platform admins only; docs/mta.md "Shaping and reactions"): provider rules,
// reaction rules and the reactions in force, per-tenant throttles.
import type { FastifyRequest } from 'fastify';
import type { App, ModuleDeps } from '../../app-types.ts';
import { access } from '../../access.ts';
import { adminIdOf } from '../../access.ts';
import { ErrorBody, OkBody } from '../../../shared/schemas/common.ts';
import {
  CreateProviderBody,
  CreateReactionRuleBody,
  LiftedReactionBody,
  ReactionParams,
  ReactionRuleBody,
  ReactionRuleParams,
  UpdateReactionRuleBody,
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
  createReactionRule,
  liftReaction,
  listProviders,
  listReactions,
  readTenantThrottle,
  removeReactionRule,
  updateProvider,
  updateReactionRule,
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

  app.delete(
    '/platform/reactions/:reactionId',
    {
      config,
      schema: {
        tags,
        summary:
          'Lift a suspension or slow-down before its end: the loops stop applying it and the rows it held are due now (platform admins)',
        params: ReactionParams,
        response: { 200: LiftedReactionBody, 404: ErrorBody, 409: ErrorBody, ...errors },
      },
    },
    async (request) => liftReaction(deps, actor(request), { reactionId: request.params.reactionId }),
  );

  app.post(
    '/platform/reaction-rules',
    {
      config,
      schema: {
        tags,
        summary: "Add a reaction rule on providers' replies; the loops match it at once (platform admins)",
        body: CreateReactionRuleBody,
        response: { 201: ReactionRuleBody, 400: ErrorBody, ...errors },
      },
    },
    async (request, reply) => reply.code(201).send(await createReactionRule(deps, actor(request), request.body)),
  );

  app.patch(
    '/platform/reaction-rules/:ruleId',
    {
      config,
      schema: {
        tags,
        summary: 'Change a reaction rule (enabled: false disables it; null clears a field) (platform admins)',
        params: ReactionRuleParams,
        body: UpdateReactionRuleBody,
        response: { 200: ReactionRuleBody, 400: ErrorBody, 404: ErrorBody, ...errors },
      },
    },
    async (request) =>
      updateReactionRule(deps, actor(request), { ruleId: request.params.ruleId, changes: request.body }),
  );

  app.delete(
    '/platform/reaction-rules/:ruleId',
    {
      config,
      schema: {
        tags,
        summary: 'Remove a reaction rule; what it drew stays listed (platform admins)',
        params: ReactionRuleParams,
        response: { 200: OkBody, 404: ErrorBody, ...errors },
      },
    },
    async (request) => removeReactionRule(deps, actor(request), { ruleId: request.params.ruleId }),
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
        summary:
          "Set a tenant's delivery throttle; null lifts a limit (platform admins). 409 while worker nodes deliver through a relay: throttles apply to direct delivery",
        params: TenantParams,
        body: SetTenantThrottleBody,
        response: { 200: TenantThrottleBody, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody, ...errors },
      },
    },
    async (request) =>
      changeTenantThrottle(deps, actor(request), { tenantId: request.params.tenantId, throttle: request.body }),
  );
}
