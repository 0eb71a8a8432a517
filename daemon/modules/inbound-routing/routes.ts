// Inbound routing (issue 52, docs/inbound.md "API and CLI"): routes, received messages, the tenant's
// token address and inbound domains. API keys need inbound:read / inbound:write; sessions need a
// membership of the tenant. The attachment URL is public: its signed token is its credential.
import { Type } from '@sinclair/typebox';
import type { App, ModuleDeps } from '../../app-types.ts';
import { access, tenantOf } from '../../access.ts';
import { NotFoundError } from '../../errors.ts';
import { readLinkToken } from '../../mail/link-tokens.ts';
import { ErrorBody, IdParams, OkBody } from '../../../shared/schemas/common.ts';
import {
  CreateInboundDomainBody,
  CreateInboundRouteBody,
  InboundDomain,
  InboundDomainsPage,
  InboundMessageDetail,
  InboundMessagesPage,
  InboundMessagesQuery,
  InboundReplayAnswer,
  InboundRoute,
  InboundStats,
  InboundRoutesPage,
  InboundRoutesQuery,
  InboundTokenAddress,
  UpdateInboundAddressBody,
  UpdateInboundRouteBody,
} from '../../../shared/schemas/inbound.ts';
import { PageQuery } from '../../../shared/schemas/common.ts';
import {
  createRoute,
  deleteRoute,
  getInboundAddress,
  getRoute,
  listRoutes,
  rotateInboundAddress,
  updateInboundAddress,
  updateRoute,
} from './service.ts';
import { getMessage, listMessages, rawMessage, replayMessage } from './messages.ts';
import {
  addInboundDomain,
  deleteInboundDomain,
  getInboundDomain,
  listInboundDomains,
  verifyInboundDomain,
} from './domains.ts';
import { attachmentContent } from './sql/messages.ts';
import { inboundStats } from './stats.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody };
/** Bytes, not JSON: OpenAPI's binary string, sent as a Buffer. */
const Binary = (description: string) => Type.Unsafe<Buffer>({ type: 'string', format: 'binary', description });
const AttachmentParams = Type.Object({ token: Type.String({ minLength: 10, maxLength: 1000 }) });

export default async function inboundRoutingRoutes(app: App, deps: ModuleDeps): Promise<void> {
  const tags = ['inbound'];
  const read = { access: access.keyOrSession('inbound:read') };
  const write = { access: access.keyOrSession('inbound:write') };

  app.get(
    '/inbound/routes',
    {
      config: read,
      schema: {
        tags,
        summary: 'List inbound routes in the order they are tried',
        querystring: InboundRoutesQuery,
        response: { 200: InboundRoutesPage, ...errors },
      },
    },
    async (request) => listRoutes(deps, tenantOf(request), request.query),
  );
  app.post(
    '/inbound/routes',
    {
      config: write,
      schema: {
        tags,
        summary: 'Add an inbound route: a recipient match and an action (webhook, forward, store, refuse)',
        body: CreateInboundRouteBody,
        response: { 201: InboundRoute, ...errors, 409: ErrorBody, 422: ErrorBody },
      },
    },
    async (request, reply) => reply.code(201).send(await createRoute(deps, tenantOf(request), request.body)),
  );
  app.get(
    '/inbound/routes/:id',
    {
      config: read,
      schema: {
        tags,
        summary: 'One inbound route',
        params: IdParams,
        response: { 200: InboundRoute, ...errors, 404: ErrorBody },
      },
    },
    async (request) => getRoute(deps, tenantOf(request), request.params.id),
  );
  app.patch(
    '/inbound/routes/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Change an inbound route',
        params: IdParams,
        body: UpdateInboundRouteBody,
        response: { 200: InboundRoute, ...errors, 404: ErrorBody, 422: ErrorBody },
      },
    },
    async (request) => updateRoute(deps, tenantOf(request), { id: request.params.id, body: request.body }),
  );
  app.delete(
    '/inbound/routes/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Remove an inbound route',
        params: IdParams,
        response: { 200: OkBody, ...errors, 404: ErrorBody },
      },
    },
    async (request) => {
      await deleteRoute(deps, tenantOf(request), request.params.id);
      return { ok: true as const };
    },
  );

  app.get(
    '/inbound/messages',
    {
      config: read,
      schema: {
        tags,
        summary: 'Search received messages, newest first (keyset paging with meta.nextCursor)',
        querystring: InboundMessagesQuery,
        response: { 200: InboundMessagesPage, ...errors },
      },
    },
    async (request) => listMessages(deps, tenantOf(request), request.query),
  );
  app.get(
    '/inbound/messages/:id',
    {
      config: read,
      schema: {
        tags,
        summary: 'One received message, parsed',
        params: IdParams,
        response: { 200: InboundMessageDetail, ...errors, 404: ErrorBody },
      },
    },
    async (request) => getMessage(deps, tenantOf(request), request.params.id),
  );
  app.get(
    '/inbound/messages/:id/raw',
    {
      config: read,
      schema: {
        tags,
        summary: 'The raw source of a received message (message/rfc822)',
        params: IdParams,
        response: { 200: Binary('the message as stored'), ...errors, 404: ErrorBody },
      },
    },
    async (request, reply) =>
      reply.type('message/rfc822').send(await rawMessage(deps, tenantOf(request), request.params.id)),
  );
  app.post(
    '/inbound/messages/:id/replay',
    {
      config: write,
      schema: {
        tags,
        summary: "Deliver a received message again by its route's current action",
        params: IdParams,
        response: { 200: InboundReplayAnswer, ...errors, 404: ErrorBody, 409: ErrorBody },
      },
    },
    async (request) => replayMessage(deps, tenantOf(request), request.params.id),
  );

  app.get(
    '/inbound/stats',
    {
      config: read,
      schema: {
        tags,
        summary: 'Received messages by status over the last 24 h and 7 days, per route, and the failing endpoints',
        response: { 200: InboundStats, ...errors },
      },
    },
    async (request) => inboundStats(deps, tenantOf(request)),
  );

  app.get(
    '/inbound/address',
    {
      config: read,
      schema: {
        tags,
        summary: "The tenant's token address on the platform inbound domain",
        response: { 200: InboundTokenAddress, ...errors },
      },
    },
    async (request) => getInboundAddress(deps, tenantOf(request)),
  );
  app.patch(
    '/inbound/address',
    {
      config: write,
      schema: {
        tags,
        summary: 'Turn reply addresses on or off (docs/inbound.md "Reply addresses")',
        body: UpdateInboundAddressBody,
        response: { 200: InboundTokenAddress, ...errors },
      },
    },
    async (request) => updateInboundAddress(deps, tenantOf(request), request.body),
  );
  app.post(
    '/inbound/address/rotate',
    {
      config: write,
      schema: {
        tags,
        summary: 'A new token address; routes of the old one move to it',
        response: { 200: InboundTokenAddress, ...errors },
      },
    },
    async (request) => rotateInboundAddress(deps, tenantOf(request)),
  );

  app.get(
    '/inbound/domains',
    {
      config: read,
      schema: {
        tags,
        summary: 'Domains the tenant receives on',
        querystring: PageQuery(),
        response: { 200: InboundDomainsPage, ...errors },
      },
    },
    async (request) => listInboundDomains(deps, tenantOf(request), request.query),
  );
  app.post(
    '/inbound/domains',
    {
      config: write,
      schema: {
        tags,
        summary: 'Add a domain to receive on (verified by its MX)',
        body: CreateInboundDomainBody,
        response: { 201: InboundDomain, ...errors, 409: ErrorBody },
      },
    },
    async (request, reply) => reply.code(201).send(await addInboundDomain(deps, tenantOf(request), request.body.name)),
  );
  app.get(
    '/inbound/domains/:id',
    {
      config: read,
      schema: {
        tags,
        summary: 'One inbound domain',
        params: IdParams,
        response: { 200: InboundDomain, ...errors, 404: ErrorBody },
      },
    },
    async (request) => getInboundDomain(deps, tenantOf(request), request.params.id),
  );
  app.post(
    '/inbound/domains/:id/verify',
    {
      config: write,
      schema: {
        tags,
        summary: 'Check the MX of an inbound domain now; explains what is wrong',
        params: IdParams,
        response: { 200: InboundDomain, ...errors, 404: ErrorBody, 409: ErrorBody },
      },
    },
    async (request) => verifyInboundDomain(deps, tenantOf(request), request.params.id),
  );
  app.delete(
    '/inbound/domains/:id',
    {
      config: write,
      schema: {
        tags,
        summary: 'Stop receiving on a domain',
        params: IdParams,
        response: { 200: OkBody, ...errors, 404: ErrorBody },
      },
    },
    async (request) => {
      await deleteInboundDomain(deps, tenantOf(request), request.params.id);
      return { ok: true as const };
    },
  );

  app.get(
    '/inbound/attachments/:token',
    {
      config: { access: access.public() },
      schema: {
        tags,
        summary: 'A large attachment of a received message, by the signed URL its webhook carried (24 h)',
        params: AttachmentParams,
        response: { 200: Binary('the attachment bytes'), 404: ErrorBody },
      },
    },
    async (request, reply) => {
      const token = readLinkToken(deps.secrets.linkSigningKey, request.params.token, 'a');
      // Expired or forged: the same 404, so a stranger learns nothing.
      if (!token || token.x * 1000 < Date.now()) throw new NotFoundError('Attachment');
      const content = await attachmentContent(deps.db.sequelize, { tenantId: token.t, attachmentId: token.i });
      if (!content) throw new NotFoundError('Attachment');
      return reply.type('application/octet-stream').header('cache-control', 'private, no-store').send(content);
    },
  );
}
