// Binds every module's Sequelize models to the connection. Called once per process or thread, by the
// wiring above the modules (app.ts, main.ts, jobs/thread.ts): db/ knows no module's model.
//
// Services take their models from the connection their deps carry, `modelsOf(deps.db.sequelize)`, never from a
// model file's import (issue 50 §4, held by test/service-signature.test.ts): what a service touches is
// then all in its arguments, like `deps.db.sql`. Sequelize keeps each model on its class, so binding a
// second connection in one process (a test's second app) rebinds the same classes; the registry read
// here is the connection's own `sequelize.models`, filled by the init calls below.
import type { Sequelize } from 'sequelize';
import { initAuthModels, type Admin, type AuthToken, type RefreshToken } from './auth/model.ts';
import { initTenantModels, type ApiKey, type Membership, type Tenant } from './tenants/model.ts';
import { initAuditModels, type AuditEvent } from './audit/model.ts';
import { initPlatformModels, type PlatformSetting } from './platform/model.ts';
import { initContactModels, type ContactRow, type ContactTagRow } from './contacts/model.ts';
import { initBillingModels, type BillingPlanRow, type SubscriptionRow } from './billing/model.ts';
import { initCampaignModels, type CampaignRow } from './campaigns/model.ts';
import { initWebhookModels, type WebhookDeliveryRecord, type WebhookEndpointRecord } from './webhooks/model.ts';
import { initDomainModels, type Domain } from './domains/model.ts';
import { initSendPipelineModels } from './emails/init-models.ts';
import type { EmailEvent, EmailLog } from './emails/model.ts';
import type { Suppression } from './suppressions/model.ts';
import type { Project } from './projects/model.ts';
import type { ScheduledEmail } from './scheduled/model.ts';
import {
  initTemplateModels,
  type Template,
  type TemplateTag,
  type TemplateTagLink,
  type TemplateVersion,
} from './templates/model.ts';

/** Every model, by its class name (Sequelize's default model name, so `sequelize.models` is keyed the same). */
export interface Models {
  Admin: typeof Admin;
  AuthToken: typeof AuthToken;
  RefreshToken: typeof RefreshToken;
  Tenant: typeof Tenant;
  Membership: typeof Membership;
  ApiKey: typeof ApiKey;
  AuditEvent: typeof AuditEvent;
  PlatformSetting: typeof PlatformSetting;
  ContactRow: typeof ContactRow;
  ContactTagRow: typeof ContactTagRow;
  BillingPlanRow: typeof BillingPlanRow;
  SubscriptionRow: typeof SubscriptionRow;
  CampaignRow: typeof CampaignRow;
  WebhookEndpointRecord: typeof WebhookEndpointRecord;
  WebhookDeliveryRecord: typeof WebhookDeliveryRecord;
  Domain: typeof Domain;
  EmailLog: typeof EmailLog;
  EmailEvent: typeof EmailEvent;
  Suppression: typeof Suppression;
  Project: typeof Project;
  ScheduledEmail: typeof ScheduledEmail;
  Template: typeof Template;
  TemplateVersion: typeof TemplateVersion;
  TemplateTag: typeof TemplateTag;
  TemplateTagLink: typeof TemplateTagLink;
}

const MODEL_NAMES: readonly (keyof Models)[] = [
  'Admin',
  'AuthToken',
  'RefreshToken',
  'Tenant',
  'Membership',
  'ApiKey',
  'AuditEvent',
  'PlatformSetting',
  'ContactRow',
  'ContactTagRow',
  'BillingPlanRow',
  'SubscriptionRow',
  'CampaignRow',
  'WebhookEndpointRecord',
  'WebhookDeliveryRecord',
  'Domain',
  'EmailLog',
  'EmailEvent',
  'Suppression',
  'Project',
  'ScheduledEmail',
  'Template',
  'TemplateVersion',
  'TemplateTag',
  'TemplateTagLink',
];

export function initModels(sequelize: Sequelize): void {
  initAuthModels(sequelize);
  initTenantModels(sequelize);
  initAuditModels(sequelize);
  initPlatformModels(sequelize);
  initContactModels(sequelize);
  initBillingModels(sequelize);
  initCampaignModels(sequelize);
  initWebhookModels(sequelize);
  initDomainModels(sequelize);
  initSendPipelineModels(sequelize);
  initTemplateModels(sequelize);
}

/** The models bound to this connection; a connection nobody bound is a wiring mistake, named here. */
export function modelsOf(sequelize: Sequelize): Models {
  const models = sequelize.models as Partial<Record<string, unknown>>;
  for (const name of MODEL_NAMES)
    if (models[name] === undefined)
      throw new Error(`Model ${name} is not bound to this connection: the wiring calls initModels(sequelize) first.`);
  return models as unknown as Models;
}
