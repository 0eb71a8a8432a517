// Binds every module's Sequelize models to the connection. Called once per process or thread.
import type { Sequelize } from 'sequelize';
import { initAuthModels } from '../modules/auth/model.ts';
import { initTenantModels } from '../modules/tenants/model.ts';
import { initAuditModels } from '../modules/audit/model.ts';
import { initPlatformModels } from '../modules/platform/model.ts';
import { initContactModels } from '../modules/contacts/model.ts';
import { initBillingModels } from '../modules/billing/model.ts';
import { initCampaignModels } from '../modules/campaigns/model.ts';
import { initWebhookModels } from '../modules/webhooks/model.ts';
import { initDomainModels } from '../modules/domains/model.ts';
import { initSendPipelineModels } from '../modules/emails/init-models.ts';
import { initTemplateModels } from '../modules/templates/model.ts';

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
