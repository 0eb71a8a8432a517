// Binds every module's Sequelize models to the connection. Called once per process or thread, by the
// wiring above the modules (app.ts, main.ts, jobs/thread.ts): db/ knows no module's model.
import type { Sequelize } from 'sequelize';
import { initAuthModels } from './auth/model.ts';
import { initTenantModels } from './tenants/model.ts';
import { initAuditModels } from './audit/model.ts';
import { initPlatformModels } from './platform/model.ts';
import { initContactModels } from './contacts/model.ts';
import { initBillingModels } from './billing/model.ts';
import { initCampaignModels } from './campaigns/model.ts';
import { initWebhookModels } from './webhooks/model.ts';
import { initDomainModels } from './domains/model.ts';
import { initSendPipelineModels } from './emails/init-models.ts';
import { initTemplateModels } from './templates/model.ts';

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
