// The outbound MTA's queue per destination (platform admins only): GET /platform/queue and the retry,
// hold and release actions on one destination domain (`svc queue`, docs/mta.md "Visibility").
import type { App, ModuleDeps } from '../../app-types.ts';
import { access } from '../../access.ts';
import { adminIdOf } from '../../access.ts';
import { ErrorBody } from '../../../shared/schemas/common.ts';
import {
  HoldDestinationBody,
  OutboundDestination,
  OutboundQueuePage,
  OutboundQueueQuery,
  QueueDomainParams,
  RetryDestinationAnswer,
} from '../../../shared/schemas/outbound-queue.ts';
import { holdDestination, listOutboundQueue, releaseDestination, retryDestination } from './service.ts';

export default async function outboundQueueRoutes(app: App, deps: ModuleDeps): Promise<void> {
  const tags = ['platform'];
  const config = { access: access.session({ tenant: false, platformAdmin: true }) };
  const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody };

  app.get(
    '/platform/queue',
    {
      config,
      schema: {
        tags,
        summary:
          'Outbound queue per destination domain: queued, deferred, in flight, next try, last response, hold (platform admins)',
        querystring: OutboundQueueQuery,
        response: { 200: OutboundQueuePage, ...errors },
      },
    },
    async (request) => listOutboundQueue(deps, { adminId: adminIdOf(request) }, request.query),
  );

  app.post(
    '/platform/queue/:domain/retry',
    {
      config,
      schema: {
        tags,
        summary:
          "Try a destination's deferred mail now and wake the MTA loop; 404 when none is spooled (platform admins)",
        params: QueueDomainParams,
        response: { 200: RetryDestinationAnswer, 404: ErrorBody, ...errors },
      },
    },
    async (request) => retryDestination(deps, { adminId: adminIdOf(request), ip: request.ip }, request.params),
  );

  app.post(
    '/platform/queue/:domain/hold',
    {
      config,
      // The body is optional: a bare POST (no content type, no bytes) holds without a reason.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        tags,
        summary:
          'Hold a destination: its mail stays spooled, untried, until released; allowed before any mail is spooled (platform admins)',
        params: QueueDomainParams,
        body: HoldDestinationBody,
        response: { 200: OutboundDestination, ...errors },
      },
    },
    async (request) =>
      holdDestination(
        deps,
        { adminId: adminIdOf(request), ip: request.ip },
        { ...request.params, reason: request.body.reason },
      ),
  );

  app.post(
    '/platform/queue/:domain/release',
    {
      config,
      schema: {
        tags,
        summary: "End a destination's hold; its mail is due at once; 409 when it is not held (platform admins)",
        params: QueueDomainParams,
        response: { 200: OutboundDestination, 409: ErrorBody, ...errors },
      },
    },
    async (request) => releaseDestination(deps, { adminId: adminIdOf(request), ip: request.ip }, request.params),
  );
}
