// Campaigns (spec §4 "Campaigns"): API key with campaigns:read / campaigns:write, or JWT.
import type { App, AppDeps } from '../../app-types.ts';
import { access } from '../../access.ts';
import { tenantOf } from '../../access.ts';
import { ErrorBody, IdParams } from '../../../shared/schemas/common.ts';
import {
  Campaign,
  CampaignDetail,
  CampaignListQuery,
  CampaignPage,
  CreateCampaignBody,
  LocaleCoverageList,
  SendCampaignBody,
} from '../../../shared/schemas/campaigns.ts';
import { createCampaign, getCampaign, listCampaigns, localeCoverage } from './service.ts';
import { cancelCampaign } from './cancel.ts';
import { startCampaignSend } from './send.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody };
const notFound = { ...errors, 404: ErrorBody };

export default async function campaignRoutes(app: App, deps: AppDeps): Promise<void> {
  const tags = ['campaigns'];
  const read = { access: access.keyOrSession('campaigns:read') };
  const write = { access: access.keyOrSession('campaigns:write') };

  app.post(
    '/campaigns',
    {
      config: write,
      schema: {
        tags,
        summary: 'Create a campaign: DRAFT, or SCHEDULED with a future sendAt',
        body: CreateCampaignBody,
        response: { 201: Campaign, ...errors, 422: ErrorBody },
      },
    },
    async (request, reply) => reply.code(201).send(await createCampaign(deps, tenantOf(request), request.body)),
  );

  app.get(
    '/campaigns',
    {
      config: read,
      schema: {
        tags,
        summary: 'List campaigns, newest first',
        querystring: CampaignListQuery,
        response: { 200: CampaignPage, ...errors },
      },
    },
    async (request) => listCampaigns(deps, tenantOf(request), request.query),
  );

  app.get(
    '/campaigns/:id/locale-coverage',
    {
      config: read,
      schema: {
        tags,
        summary: 'Audience contacts per locale, and whether the template has a published version for each',
        params: IdParams,
        response: { 200: LocaleCoverageList, ...notFound },
      },
    },
    async (request) => localeCoverage(deps, tenantOf(request), { id: request.params.id }),
  );

  app.get(
    '/campaigns/:id',
    {
      config: read,
      schema: {
        tags,
        summary: 'One campaign, with the size of its audience now',
        params: IdParams,
        response: { 200: CampaignDetail, ...notFound },
      },
    },
    async (request) => getCampaign(deps, tenantOf(request), { id: request.params.id }),
  );

  app.post(
    '/campaigns/:id/cancel',
    {
      config: write,
      schema: {
        tags,
        summary:
          'Cancel a DRAFT, SCHEDULED or SENDING campaign; a SENDING one stops and its queued sends not yet picked up are taken back',
        params: IdParams,
        response: { 200: Campaign, ...notFound, 409: ErrorBody },
      },
    },
    async (request) => cancelCampaign(deps, tenantOf(request), { id: request.params.id }),
  );

  app.post(
    '/campaigns/:id/send',
    {
      config: write,
      schema: {
        tags,
        summary:
          'Start sending a DRAFT or SCHEDULED campaign: answers 202 SENDING at once; a worker hands each opted-in contact to the send pipeline (quota, suppressions, tracking) in chunks. Follow it with GET /campaigns/{id}',
        params: IdParams,
        body: SendCampaignBody,
        response: { 202: Campaign, ...notFound, 409: ErrorBody, 422: ErrorBody },
      },
    },
    async (request, reply) => {
      const ctx = tenantOf(request);
      return reply
        .code(202)
        .send(
          await startCampaignSend(deps, ctx, { id: request.params.id, body: request.body, testMode: ctx.testMode }),
        );
    },
  );
}
