// Platform settings as the platform admin reads and changes them. Reading them for everyone else is
// infrastructure: db/platform-settings.ts.
import type { AppDeps } from '../../app-types.ts';
import type { AdminContext } from '../../context.ts';
import { modelsOf } from '../models.ts';
import { recordAudit } from '../audit/service.ts';
import {
  forgetCachedPlatformSettings,
  getPlatformSettings,
  PLATFORM_SETTING_KEYS,
} from '../../db/platform-settings.ts';
import type { PlatformSettings, UpdatePlatformSettings } from '../../../shared/schemas/platform.ts';

export type PlatformDeps = Pick<AppDeps, 'db'>;

/** GET /platform/settings: the settings as a platform admin sees them (all of them). */
export function readPlatformSettings(deps: PlatformDeps, _admin: AdminContext): Promise<PlatformSettings> {
  return getPlatformSettings(deps.db.sequelize);
}

export async function updatePlatformSettings(
  deps: PlatformDeps,
  actor: AdminContext & { ip?: string },
  changes: UpdatePlatformSettings,
): Promise<PlatformSettings> {
  const { sequelize } = deps.db;
  await sequelize.transaction(async (transaction) => {
    for (const key of PLATFORM_SETTING_KEYS) {
      const value = changes[key];
      if (value === undefined) continue;
      // null means "not set": the row goes and the default (null for every nullable setting) applies.
      if (value === null) await modelsOf(sequelize).PlatformSetting.destroy({ where: { key }, transaction });
      else await modelsOf(sequelize).PlatformSetting.upsert({ key, value }, { transaction });
    }
    await recordAudit(
      deps.db.sequelize,
      {
        action: 'platform.settings_updated',
        adminId: actor.adminId,
        ip: actor.ip,
        metadata: { changed: Object.keys(changes) },
      },
      transaction,
    );
  });
  forgetCachedPlatformSettings(sequelize);
  return getPlatformSettings(sequelize);
}
