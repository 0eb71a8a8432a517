// Campaigns (spec §4 "Campaigns"): API key with campaigns:read / campaigns:write, or JWT.
import type { App, AppDeps } from '../../app-types.ts';
import { access } from '../../plugins/access.ts';
import { tenantOf } from '../../plugins/auth.ts';
import { ErrorBody, IdParams } from '../../../shared/schemas/common.ts';
import { Campaign, CampaignDetail, CampaignListQuery, CampaignPage, CreateCampaignBody, LocaleCoverageList, SendCampaignBody } from '../../../shared/schemas/campaigns.ts';
import { cancelCampaign, createCampaign, getCampaign, listCampaigns, localeCoverage } from './service.ts';
import { sendCampaign } from './send.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody };
const notFound = { ...errors, 404: ErrorBody };

export default async function campaignRoutes(app: App, deps: AppDeps): Promise<void> {
  const { sequelize } = deps.db;
  const sendDeps = { sequelize, config: deps.config, secrets: deps.secrets };
  const tags = ['campaigns'];
  const read = { access: access.keyOrSession('campaigns:read') };
  const write = { access: access.keyOrSession('campaigns:write') };

  app.post('/campaigns', {
    config: write,
    schema: {
      tags,
      summary: 'Create a campaign: DRAFT, or SCHEDULED with a future sendAt',
      body: CreateCampaignBody,
      response: { 201: Campaign, ...errors, 422: ErrorBody },
    },
  }, async (request, reply) => reply.code(201).send(await createCampaign(sequelize, tenantOf(request), request.body)));

  app.get('/campaigns', {
    config: read,
    schema: { tags, summary: 'List campaigns, newest first', querystring: CampaignListQuery, response: { 200: CampaignPage, ...errors } },
  }, async (request) => listCampaigns(tenantOf(request), request.query));

  app.get('/campaigns/:id/locale-coverage', {
    config: read,
    schema: {
      tags,
      summary: 'Audience contacts per locale, and whether the template has a published version for each',
      params: IdParams,
      response: { 200: LocaleCoverageList, ...notFound },
    },
  }, async (request) => localeCoverage(sequelize, tenantOf(request), request.params.id));

  app.get('/campaigns/:id', {
    config: read,
    schema: { tags, summary: 'One campaign, with the size of its audience now', params: IdParams, response: { 200: CampaignDetail, ...notFound } },
  }, async (request) => getCampaign(sequelize, tenantOf(request), request.params.id));

  app.post('/campaigns/:id/cancel', {
    config: write,
    schema: { tags, summary: 'Cancel a DRAFT or SCHEDULED campaign', params: IdParams, response: { 200: Campaign, ...notFound, 409: ErrorBody } },
  }, async (request) => cancelCampaign(tenantOf(request), request.params.id));

  app.post('/campaigns/:id/send', {
    config: write,
    schema: {
      tags,
      summary: 'Send a DRAFT or SCHEDULED campaign now to its opted-in audience, through the send pipeline (quota, suppressions, tracking)',
      params: IdParams,
      body: SendCampaignBody,
      response: { 200: Campaign, ...notFound, 409: ErrorBody, 422: ErrorBody, 429: ErrorBody },
    },
  }, async (request) => sendCampaign(sendDeps, tenantOf(request), request.params.id, request.body));
}
