// Platform settings: defaults from shared/schemas/platform.ts, overridden by rows of
// platform_settings. Read by registration, the send pipeline and domains.
import type { Sequelize, Transaction } from 'sequelize';
import type { AppDeps } from '../../app-types.ts';
import type { AdminContext } from '../../context.ts';
import { PlatformSetting } from './model.ts';
import { recordAudit } from '../audit/service.ts';
import {
  DEFAULT_PLATFORM_SETTINGS,
  type PlatformSettings,
  type UpdatePlatformSettings,
} from '../../../shared/schemas/platform.ts';

const KNOWN_KEYS = Object.keys(DEFAULT_PLATFORM_SETTINGS) as (keyof PlatformSettings)[];

/**
 * The current settings. Takes the connection rather than using the model, so worker threads and
 * other modules can call it without binding this module's models. Inside a transaction, pass it:
 * the embedded database serves one session at a time, so a second connection would wait forever.
 */
export async function getPlatformSettings(sequelize: Sequelize, transaction?: Transaction): Promise<PlatformSettings> {
  const [rows] = await sequelize.query('SELECT key, value FROM platform_settings', { transaction });
  const settings: PlatformSettings = { ...DEFAULT_PLATFORM_SETTINGS };
  for (const row of rows as { key: string; value: unknown }[]) {
    if ((KNOWN_KEYS as string[]).includes(row.key)) {
      (settings as Record<string, unknown>)[row.key] = row.value;
    }
  }
  return settings;
}

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
    for (const key of KNOWN_KEYS) {
      const value = changes[key];
      if (value === undefined) continue;
      // null means "not set": the row goes and the default (null for every nullable setting) applies.
      if (value === null) await PlatformSetting.destroy({ where: { key }, transaction });
      else await PlatformSetting.upsert({ key, value }, { transaction });
    }
    await recordAudit(
      {
        action: 'platform.settings_updated',
        adminId: actor.adminId,
        ip: actor.ip,
        metadata: { changed: Object.keys(changes) },
      },
      transaction,
    );
  });
  return getPlatformSettings(sequelize);
}
