// The send pipeline's models in one call, so the shared registry (daemon/modules/models.ts) has one line for them.
import type { Sequelize } from 'sequelize';
import { initEmailModels } from './model.ts';
import { initSuppressionModels } from '../suppressions/model.ts';
import { initProjectModels } from '../projects/model.ts';
import { initScheduledModels } from '../scheduled/model.ts';

export function initSendPipelineModels(sequelize: Sequelize): void {
  initEmailModels(sequelize);
  initSuppressionModels(sequelize);
  initProjectModels(sequelize);
  initScheduledModels(sequelize);
}
