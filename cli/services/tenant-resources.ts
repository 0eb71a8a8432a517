// Calls behind the hand-made commands on one tenant's resources that the typed client in client.ts does not
// carry: webhook endpoints, domains, scheduled sends, campaigns, batches and resends.
import type { SvcClient } from '../client.ts';
import type { PageOf } from '../../shared/schemas/common.ts';
import type { WebhookDelivery, WebhookEndpoint } from '../../shared/schemas/webhooks.ts';
import type { ScheduledEmail, ScheduledQuery } from '../../shared/schemas/scheduled.ts';
import type { BatchAccepted, BatchBody, SendAccepted } from '../../shared/schemas/emails.ts';
import type { Campaign, CreateCampaignBody, LocaleCoverage } from '../../shared/schemas/campaigns.ts';

const id = (value: string) => encodeURIComponent(value);

export const webhookEndpoints = {
  toggle: (client: SvcClient, endpointId: string) =>
    client.http.request<WebhookEndpoint>('PATCH', `/webhooks/endpoints/${id(endpointId)}/toggle`),
  remove: (client: SvcClient, endpointId: string) =>
    client.http.request<unknown>('DELETE', `/webhooks/endpoints/${id(endpointId)}`),
  test: (client: SvcClient, endpointId: string) =>
    client.http.request<WebhookDelivery>('POST', `/webhooks/endpoints/${id(endpointId)}/test`),
};

export function removeDomain(client: SvcClient, domainId: string) {
  return client.http.request<unknown>('DELETE', `/domains/${id(domainId)}`);
}

export const scheduledSends = {
  list: (client: SvcClient, query: ScheduledQuery) =>
    client.http.request<PageOf<ScheduledEmail>>('GET', '/scheduled-emails', { query: { ...query } }),
  cancel: (client: SvcClient, scheduledId: string) =>
    client.http.request<ScheduledEmail>('DELETE', `/scheduled-emails/${id(scheduledId)}`),
};

export const sends = {
  batch: (client: SvcClient, body: BatchBody, idempotencyKey?: string) =>
    client.http.request<BatchAccepted>('POST', '/emails/batch', {
      json: body,
      ...(idempotencyKey ? { headers: { 'idempotency-key': idempotencyKey } } : {}),
    }),
  resend: (client: SvcClient, logId: string) =>
    client.http.request<SendAccepted>('POST', `/emails/logs/${id(logId)}/resend`),
};

export const campaigns = {
  create: (client: SvcClient, body: CreateCampaignBody) =>
    client.http.request<Campaign>('POST', '/campaigns', { json: body }),
  localeCoverage: (client: SvcClient, campaignId: string) =>
    client.http.request<LocaleCoverage[]>('GET', `/campaigns/${id(campaignId)}/locale-coverage`),
};
