// Outbound webhook endpoints (spec §4 "Webhooks"): API key with webhooks:manage, or JWT.
// The provider receivers (/webhooks/ses, /webhooks/smtp-dsn) live in modules/inbound.
import type { App, AppDeps } from '../../app-types.ts';
import { access } from '../../access.ts';
import { tenantOf } from '../../access.ts';
import { ErrorBody, IdParams, OkBody } from '../../../shared/schemas/common.ts';
import {
  CreateWebhookEndpointBody,
  CreatedWebhookEndpoint,
  DeliveryParams,
  WebhookDeliveriesQuery,
  WebhookDelivery,
  WebhookDeliveryPage,
  WebhookEndpoint,
  WebhookEndpointPage,
  WebhookEndpointsQuery,
} from '../../../shared/schemas/webhooks.ts';
import {
  createEndpoint,
  deleteEndpoint,
  listDeliveries,
  listEndpoints,
  replayDelivery,
  sendTestEvent,
  toggleEndpoint,
} from './service.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody };
const notFound = { ...errors, 404: ErrorBody };

export default async function webhookRoutes(app: App, deps: AppDeps): Promise<void> {
  const tags = ['webhooks'];
  const manage = { access: access.keyOrSession('webhooks:manage') };

  app.get(
    '/webhooks/endpoints',
    {
      config: manage,
      schema: {
        tags,
        summary: 'List webhook endpoints (secrets are never shown again)',
        querystring: WebhookEndpointsQuery,
        response: { 200: WebhookEndpointPage, ...errors },
      },
    },
    async (request) => listEndpoints(deps, tenantOf(request), request.query),
  );

  app.post(
    '/webhooks/endpoints',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Register an endpoint; the answer holds its signing secret, shown this once',
        body: CreateWebhookEndpointBody,
        response: { 201: CreatedWebhookEndpoint, ...errors },
      },
    },
    async (request, reply) => reply.code(201).send(await createEndpoint(deps, tenantOf(request), request.body)),
  );

  app.delete(
    '/webhooks/endpoints/:id',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Delete an endpoint and its deliveries',
        params: IdParams,
        response: { 200: OkBody, ...notFound },
      },
    },
    async (request) => {
      await deleteEndpoint(deps, tenantOf(request), { id: request.params.id });
      return { ok: true as const };
    },
  );

  app.patch(
    '/webhooks/endpoints/:id/toggle',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Switch an endpoint on or off (on clears its failure streak)',
        params: IdParams,
        response: { 200: WebhookEndpoint, ...notFound },
      },
    },
    async (request) => toggleEndpoint(deps, tenantOf(request), { id: request.params.id }),
  );

  app.get(
    '/webhooks/endpoints/:id/deliveries',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Deliveries of an endpoint, newest first (limit defaults to 20)',
        params: IdParams,
        querystring: WebhookDeliveriesQuery,
        response: { 200: WebhookDeliveryPage, ...notFound },
      },
    },
    async (request) => listDeliveries(deps, tenantOf(request), { endpointId: request.params.id, ...request.query }),
  );

  app.post(
    '/webhooks/endpoints/:id/deliveries/:deliveryId/replay',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Send a delivery again as a new delivery (queued, with retries)',
        params: DeliveryParams,
        response: { 202: WebhookDelivery, ...notFound, 409: ErrorBody },
      },
    },
    async (request, reply) =>
      reply.code(202).send(
        await replayDelivery(deps, tenantOf(request), {
          endpointId: request.params.id,
          deliveryId: request.params.deliveryId,
        }),
      ),
  );

  app.post(
    '/webhooks/endpoints/:id/test',
    {
      config: manage,
      schema: {
        tags,
        summary: 'Send a `test` event to the endpoint now and answer with the delivery (one attempt, no retries)',
        params: IdParams,
        response: { 200: WebhookDelivery, ...notFound },
      },
    },
    async (request) => sendTestEvent(deps, tenantOf(request), { endpointId: request.params.id }),
  );
}
