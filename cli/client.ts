// Typed client of the daemon's API, one method per endpoint the CLI uses. Shapes come from shared/schemas.
import type { LoginAnswer, MeAnswer, RegistrationStatus, TokenPair } from '../shared/schemas/auth.ts';
import type { DiagnosisBody, DomainBody, VerifyDomainBody } from '../shared/schemas/domains.ts';
import type { DeliverabilityBody, DeliverabilityQuery } from '../shared/schemas/deliverability.ts';
import type { DmarcReportBody } from '../shared/schemas/dmarc.ts';
import type {
  CreatedWebhookEndpoint,
  CreateWebhookEndpointBody,
  WebhookDelivery,
  WebhookEndpoint,
} from '../shared/schemas/webhooks.ts';
import type {
  ApiKeySummary,
  CreatedApiKey,
  EmailLog,
  EmailLogDetail,
  Page,
  ScheduledEmail,
  SendAnswer,
  Suppression,
  TenantSummary,
} from './api-types.ts';
import type { Static } from '@sinclair/typebox';
import type { CampaignPage as CampaignPageSchema } from '../shared/schemas/campaigns.ts';
import type { TemplateDetail, TemplateSummary, TemplateVersionView } from '../shared/schemas/templates.ts';
import type { Campaign, CampaignDetail } from '../shared/schemas/campaigns.ts';
import type { ContactImportResult } from '../shared/schemas/contacts.ts';
import { HttpSession } from './http.ts';
import { NoTenantError } from './errors.ts';
import type { TenantRetentionBody, UpdateTenantRetentionBody } from '../shared/schemas/retention.ts';
import { ProfileStore } from './profiles.ts';
import type { CliEnvironment } from './environment.ts';
import type { DoctorReport } from '../shared/schemas/doctor.ts';
import type { QueuesHealth, Readiness } from '../shared/schemas/health.ts';
import type { LogsQuery, SendEmailBody } from '../shared/schemas/emails.ts';
import type { SendTemplateBody } from '../shared/schemas/templates.ts';
import type { ScheduleEmailBody } from '../shared/schemas/scheduled.ts';

export type CampaignPage = Static<typeof CampaignPageSchema>;

/** The filters of GET /emails/logs. */
export type LogFilters = LogsQuery;

/** Lists may be paged ({ data, meta }) or plain arrays depending on the endpoint. */
function items<T>(answer: Page<T> | T[] | { data: T[] }): T[] {
  return Array.isArray(answer) ? answer : answer.data;
}

export class SvcClient {
  readonly http: HttpSession;

  constructor(profileName: string, environment: CliEnvironment, store = new ProfileStore()) {
    this.http = new HttpSession(profileName, store, environment);
  }

  private tenantPath(suffix = ''): string {
    const tenantId = this.http.tenantId;
    if (!tenantId) throw new NoTenantError();
    return `/tenants/${tenantId}${suffix}`;
  }

  // Auth
  registrationStatus() {
    return this.http.request<RegistrationStatus>('GET', '/auth/registration-status', { auth: false, tenant: false });
  }
  register(body: { email: string; password: string; name?: string }) {
    return this.http.request<{ admin: { id: string; email: string } }>('POST', '/auth/register', {
      json: body,
      auth: false,
      tenant: false,
    });
  }
  login(email: string, password: string) {
    return this.http.request<LoginAnswer>('POST', '/auth/login', {
      json: { email, password },
      auth: false,
      tenant: false,
    });
  }
  verifyLogin(challengeToken: string, code: string) {
    return this.http.request<TokenPair>('POST', '/auth/login/verify-2fa', {
      json: { challengeToken, code },
      auth: false,
      tenant: false,
    });
  }
  logout() {
    return this.http.request<unknown>('POST', '/auth/logout', { tenant: false });
  }
  me() {
    return this.http.request<MeAnswer>('GET', '/auth/me', { tenant: false });
  }
  twoFactorStatus() {
    return this.http.request<{ enabled: boolean; pending: boolean }>('GET', '/auth/2fa/status', { tenant: false });
  }
  startTwoFactor() {
    return this.http.request<{ secret: string; otpauthUrl: string }>('POST', '/auth/2fa/enable', { tenant: false });
  }
  verifyTwoFactor(code: string) {
    return this.http.request<unknown>('POST', '/auth/2fa/verify', { json: { code }, tenant: false });
  }
  disableTwoFactor(code: string) {
    return this.http.request<unknown>('POST', '/auth/2fa/disable', { json: { code }, tenant: false });
  }

  // Tenants and keys
  async listTenants(): Promise<TenantSummary[]> {
    return items(await this.http.request<Page<TenantSummary> | TenantSummary[]>('GET', '/tenants', { tenant: false }));
  }
  getTenant(id: string) {
    return this.http.request<TenantSummary>('GET', `/tenants/${encodeURIComponent(id)}`, { tenant: false });
  }
  createTenant(name: string) {
    return this.http.request<TenantSummary>('POST', '/tenants', { json: { name }, tenant: false });
  }
  getRetention() {
    return this.http.request<TenantRetentionBody>('GET', this.tenantPath('/retention'));
  }
  updateRetention(changes: UpdateTenantRetentionBody) {
    return this.http.request<TenantRetentionBody>('PATCH', this.tenantPath('/retention'), { json: changes });
  }
  listApiKeys(query: { page?: number; limit?: number } = {}) {
    return this.http.request<Page<ApiKeySummary>>('GET', this.tenantPath('/api-keys'), { query });
  }
  createApiKey(body: { name: string; scopes: string[]; environment: 'live' | 'test' }) {
    return this.http.request<CreatedApiKey>('POST', this.tenantPath('/api-keys'), { json: body });
  }
  rotateApiKey(id: string) {
    return this.http.request<CreatedApiKey>('POST', this.tenantPath(`/api-keys/${encodeURIComponent(id)}/rotate`));
  }
  revokeApiKey(id: string) {
    return this.http.request<unknown>('DELETE', this.tenantPath(`/api-keys/${encodeURIComponent(id)}`));
  }

  // Sending and logs
  send(body: SendEmailBody, options: { sync?: boolean; idempotencyKey?: string } = {}) {
    return this.http.request<SendAnswer>('POST', '/emails/send', {
      json: body,
      query: { sync: options.sync ? 'true' : undefined },
      headers: options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : undefined,
    });
  }
  sendTemplate(body: SendTemplateBody, options: { sync?: boolean; idempotencyKey?: string } = {}) {
    return this.http.request<SendAnswer>('POST', '/emails/send-template', {
      json: body,
      query: { sync: options.sync ? 'true' : undefined },
      headers: options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : undefined,
    });
  }
  schedule(body: ScheduleEmailBody, options: { idempotencyKey?: string } = {}) {
    return this.http.request<ScheduledEmail>('POST', '/scheduled-emails', {
      json: body,
      headers: options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : undefined,
    });
  }
  listLogs(filters: LogFilters = {}) {
    return this.http.request<Page<EmailLog>>('GET', '/emails/logs', { query: { ...filters } });
  }
  getLog(id: string) {
    return this.http.request<EmailLogDetail>('GET', `/emails/logs/${encodeURIComponent(id)}`);
  }
  /** The live log stream (server-sent events); the caller reads and closes the body. */
  openLogStream(signal: AbortSignal, options: { backlog?: number; lastEventId?: string } = {}) {
    return this.http.send('GET', '/emails/logs/stream', {
      stream: true,
      signal,
      query: { backlog: options.lastEventId ? undefined : options.backlog },
      headers: {
        accept: 'text/event-stream',
        ...(options.lastEventId ? { 'last-event-id': options.lastEventId } : {}),
      },
    });
  }

  // Templates
  listTemplates(query: { page?: number; limit?: number; search?: string } = {}) {
    return this.http.request<Page<TemplateSummary>>('GET', '/templates', { query });
  }
  getTemplate(id: string) {
    return this.http.request<TemplateDetail>('GET', `/templates/${encodeURIComponent(id)}`);
  }
  createTemplate(body: Record<string, unknown>) {
    return this.http.request<TemplateDetail>('POST', '/templates', { json: body });
  }
  createTemplateVersion(templateId: string, body?: Record<string, unknown>) {
    return this.http.request<TemplateVersionView>('POST', `/templates/${encodeURIComponent(templateId)}/versions`, {
      json: body,
    });
  }
  updateTemplateVersion(templateId: string, versionId: string, body: Record<string, unknown>) {
    return this.http.request<TemplateVersionView>(
      'PATCH',
      `/templates/${encodeURIComponent(templateId)}/versions/${encodeURIComponent(versionId)}`,
      { json: body },
    );
  }
  getTemplateVersion(templateId: string, versionId: string) {
    return this.http.request<TemplateVersionView>(
      'GET',
      `/templates/${encodeURIComponent(templateId)}/versions/${encodeURIComponent(versionId)}`,
    );
  }
  previewTemplateVersion(templateId: string, versionId: string, data: Record<string, unknown>) {
    return this.http.request<{ subject: string; html: string; text: string }>(
      'POST',
      `/templates/${encodeURIComponent(templateId)}/versions/${encodeURIComponent(versionId)}/preview`,
      { json: { data } },
    );
  }
  renderReactEmail(jsx: string, props: Record<string, unknown>) {
    return this.http.request<{ html: string; text: string }>('POST', '/templates/render-react-email', {
      json: { jsx, props },
    });
  }
  publishTemplateVersion(templateId: string, versionId: string) {
    return this.http.request<TemplateVersionView>(
      'POST',
      `/templates/${encodeURIComponent(templateId)}/versions/${encodeURIComponent(versionId)}/publish`,
    );
  }

  // Domains
  async listDomains(): Promise<DomainBody[]> {
    return items(
      await this.http.request<Page<DomainBody> | DomainBody[]>('GET', '/domains', { query: { limit: 100 } }),
    );
  }
  addDomain(name: string) {
    return this.http.request<DomainBody>('POST', '/domains', { json: { name } });
  }
  domainDns(id: string) {
    return this.http.request<DomainBody>('GET', `/domains/${encodeURIComponent(id)}/dns`);
  }
  verifyDomain(id: string) {
    return this.http.request<VerifyDomainBody>('POST', `/domains/${encodeURIComponent(id)}/verify`);
  }
  diagnoseDomain(id: string) {
    return this.http.request<DiagnosisBody>('GET', `/domains/${encodeURIComponent(id)}/diagnose`);
  }
  deliverabilityStats(query: DeliverabilityQuery) {
    return this.http.request<DeliverabilityBody>('GET', '/stats/deliverability', { query });
  }
  dmarcReports(id: string, query: { page?: number; limit?: number } = {}) {
    return this.http.request<Page<DmarcReportBody>>('GET', `/domains/${encodeURIComponent(id)}/dmarc-reports`, {
      query,
    });
  }

  // Webhooks
  listWebhooks(query: { page?: number; limit?: number } = {}) {
    return this.http.request<Page<WebhookEndpoint>>('GET', '/webhooks/endpoints', { query });
  }
  addWebhook(body: CreateWebhookEndpointBody) {
    return this.http.request<CreatedWebhookEndpoint>('POST', '/webhooks/endpoints', { json: body });
  }
  replayDelivery(endpointId: string, deliveryId: string) {
    return this.http.request<WebhookDelivery>(
      'POST',
      `/webhooks/endpoints/${encodeURIComponent(endpointId)}/deliveries/${encodeURIComponent(deliveryId)}/replay`,
    );
  }
  listDeliveries(endpointId: string, query: { page?: number; limit?: number } = {}) {
    return this.http.request<Page<WebhookDelivery>>(
      'GET',
      `/webhooks/endpoints/${encodeURIComponent(endpointId)}/deliveries`,
      { query },
    );
  }

  // Suppressions
  // Campaigns and contacts at list scale
  listCampaigns(query: { page?: number; limit?: number; status?: string } = {}) {
    return this.http.request<CampaignPage>('GET', '/campaigns', { query });
  }
  getCampaign(id: string) {
    return this.http.request<CampaignDetail>('GET', `/campaigns/${encodeURIComponent(id)}`);
  }
  sendCampaign(id: string, from: string) {
    return this.http.request<Campaign>('POST', `/campaigns/${encodeURIComponent(id)}/send`, { json: { from } });
  }
  cancelCampaign(id: string) {
    return this.http.request<Campaign>('POST', `/campaigns/${encodeURIComponent(id)}/cancel`);
  }
  /** Streams a CSV file to POST /contacts/import; `map` holds field=Column pairs. */
  importContacts(csv: ReadableStream<Uint8Array>, map: string[]) {
    return this.http.request<ContactImportResult>('POST', '/contacts/import', {
      body: csv,
      query: { map },
      headers: { 'content-type': 'text/csv' },
    });
  }

  listSuppressions(query: { page?: number; limit?: number; email?: string; reason?: string } = {}) {
    return this.http.request<Page<Suppression>>('GET', '/suppressions', { query });
  }
  addSuppression(email: string, reason: string) {
    return this.http.request<Suppression>('POST', '/suppressions', { json: { email, reason } });
  }
  removeSuppressionByEmail(email: string) {
    return this.http.request<unknown>('DELETE', '/suppressions', { query: { email } });
  }
  removeSuppression(id: string) {
    return this.http.request<unknown>('DELETE', `/suppressions/${encodeURIComponent(id)}`);
  }

  // Health
  ready() {
    return this.http.request<Readiness>('GET', '/health/ready', { auth: false, tenant: false, accept: [503] });
  }
  queues() {
    // A 503 here is an error body (the database did not answer), not a report: it throws, and the
    // dashboard's panel and `daemon status` say why.
    return this.http.request<QueuesHealth>('GET', '/health/queues', { tenant: false });
  }
  doctor() {
    return this.http.request<DoctorReport>('GET', '/platform/doctor', { tenant: false });
  }
}
