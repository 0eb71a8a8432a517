// /platform/ip-pools (platform admins only; issue 29, docs/mta.md "IP pools and warm-up"): pools of
// source addresses, their warm-up schedule and progress, and which tenants send from them.
import type { FastifyRequest } from 'fastify';
import type { App, ModuleDeps } from '../../app-types.ts';
import { access } from '../../access.ts';
import { adminIdOf } from '../../access.ts';
import { ErrorBody, OkBody } from '../../../shared/schemas/common.ts';
import {
  AssignIpPoolBody,
  CreateIpPoolAddressBody,
  CreateIpPoolBody,
  IpPool,
  IpPoolAddressParams,
  IpPoolAssignmentParams,
  IpPoolList,
  IpPoolParams,
  UpdateIpPoolAddressBody,
  UpdateIpPoolBody,
  WarmupSchedule,
} from '../../../shared/schemas/ip-pools.ts';
import {
  addIpPoolAddress,
  assignIpPool,
  createIpPool,
  deleteIpPool,
  getIpPool,
  listIpPools,
  removeIpPoolAddress,
  setIpPoolSchedule,
  unassignIpPool,
  updateIpPool,
  updateIpPoolAddress,
} from './service.ts';

export default async function ipPoolRoutes(app: App, deps: ModuleDeps): Promise<void> {
  const tags = ['platform'];
  const config = { access: access.session({ tenant: false, platformAdmin: true }) };
  const errors = { 401: ErrorBody, 403: ErrorBody };
  const missing = { 404: ErrorBody, ...errors };
  const invalid = { 400: ErrorBody, 404: ErrorBody, 409: ErrorBody, ...errors };
  const actor = (request: FastifyRequest) => ({ adminId: adminIdOf(request), ip: request.ip });

  app.get(
    '/platform/ip-pools',
    {
      config,
      schema: {
        tags,
        summary: "IP pools with their addresses, today's warm-up progress per provider and their tenants",
        response: { 200: IpPoolList, ...errors },
      },
    },
    async () => listIpPools(deps),
  );

  app.post(
    '/platform/ip-pools',
    {
      config,
      schema: {
        tags,
        summary: 'Create an IP pool, optionally with its addresses and warm-up schedule',
        body: CreateIpPoolBody,
        response: { 201: IpPool, 400: ErrorBody, 409: ErrorBody, 422: ErrorBody, ...errors },
      },
    },
    async (request, reply) => reply.code(201).send(await createIpPool(deps, actor(request), request.body)),
  );

  app.get(
    '/platform/ip-pools/:poolId',
    { config, schema: { tags, summary: 'One IP pool', params: IpPoolParams, response: { 200: IpPool, ...missing } } },
    async (request) => getIpPool(deps, request.params.poolId),
  );

  app.patch(
    '/platform/ip-pools/:poolId',
    {
      config,
      schema: {
        tags,
        summary: 'Rename or describe an IP pool',
        params: IpPoolParams,
        body: UpdateIpPoolBody,
        response: { 200: IpPool, ...invalid },
      },
    },
    async (request) => updateIpPool(deps, actor(request), request.params.poolId, request.body),
  );

  app.delete(
    '/platform/ip-pools/:poolId',
    {
      config,
      schema: {
        tags,
        summary: 'Delete an IP pool that no tenant is assigned to',
        params: IpPoolParams,
        response: { 200: OkBody, 409: ErrorBody, ...missing },
      },
    },
    async (request) => {
      await deleteIpPool(deps, actor(request), request.params.poolId);
      return { ok: true as const };
    },
  );

  app.post(
    '/platform/ip-pools/:poolId/addresses',
    {
      config,
      schema: {
        tags,
        summary:
          'Add a source address (warming up from today unless warm: false): a unicast address this node can bind (else 400 or 422)',
        params: IpPoolParams,
        body: CreateIpPoolAddressBody,
        response: { 201: IpPool, 422: ErrorBody, ...invalid },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await addIpPoolAddress(deps, actor(request), request.params.poolId, request.body)),
  );

  app.patch(
    '/platform/ip-pools/:poolId/addresses/:addressId',
    {
      config,
      schema: {
        tags,
        summary: "Change an address's EHLO name, weight or warm-up start",
        params: IpPoolAddressParams,
        body: UpdateIpPoolAddressBody,
        response: { 200: IpPool, ...invalid },
      },
    },
    async (request) =>
      updateIpPoolAddress(deps, actor(request), request.params.poolId, request.params.addressId, request.body),
  );

  app.delete(
    '/platform/ip-pools/:poolId/addresses/:addressId',
    {
      config,
      schema: {
        tags,
        summary: 'Remove a source address from its pool',
        params: IpPoolAddressParams,
        response: { 200: OkBody, ...missing },
      },
    },
    async (request) => {
      await removeIpPoolAddress(deps, actor(request), request.params.poolId, request.params.addressId);
      return { ok: true as const };
    },
  );

  app.post(
    '/platform/ip-pools/:poolId/assignments',
    {
      config,
      schema: {
        tags,
        summary: "Send a tenant's mail (or one project's, or one stream's) from this pool",
        params: IpPoolParams,
        body: AssignIpPoolBody,
        response: { 201: IpPool, ...invalid },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await assignIpPool(deps, actor(request), request.params.poolId, request.body)),
  );

  app.delete(
    '/platform/ip-pools/:poolId/assignments/:assignmentId',
    {
      config,
      schema: {
        tags,
        summary:
          "Remove an assignment: that scope's mail leaves from the next broader assignment, or the node's address",
        params: IpPoolAssignmentParams,
        response: { 200: OkBody, ...missing },
      },
    },
    async (request) => {
      await unassignIpPool(deps, actor(request), request.params.poolId, request.params.assignmentId);
      return { ok: true as const };
    },
  );

  app.put(
    '/platform/ip-pools/:poolId/schedule',
    {
      config,
      schema: {
        tags,
        summary: "Set the pool's warm-up schedule (per-provider ceilings per day)",
        params: IpPoolParams,
        body: WarmupSchedule,
        response: { 200: IpPool, ...invalid },
      },
    },
    async (request) => setIpPoolSchedule(deps, actor(request), request.params.poolId, request.body),
  );

  app.delete(
    '/platform/ip-pools/:poolId/schedule',
    {
      config,
      schema: {
        tags,
        summary: 'Go back to the shipped 30-day warm-up schedule',
        params: IpPoolParams,
        response: { 200: IpPool, ...missing },
      },
    },
    async (request) => setIpPoolSchedule(deps, actor(request), request.params.poolId, null),
  );
}
