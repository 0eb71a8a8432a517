// Platform settings as every layer reads them: defaults from shared/schemas/platform.ts, overridden
// by rows of platform_settings. Infrastructure (mail/, domains, auth, retention and the inbound
// listener read it); writing them is the platform module's (modules/platform/service.ts).
import type { Sequelize, Transaction } from 'sequelize';
import { DEFAULT_PLATFORM_SETTINGS, type PlatformSettings } from '../../shared/schemas/platform.ts';

export const PLATFORM_SETTING_KEYS = Object.keys(DEFAULT_PLATFORM_SETTINGS) as (keyof PlatformSettings)[];

/**
 * The current settings. Takes the connection rather than using the model, so worker threads and
 * other modules can call it without binding the platform module's models. Inside a transaction, pass
 * it: the embedded database serves one session at a time, so a second connection would wait forever.
 */
export async function getPlatformSettings(sequelize: Sequelize, transaction?: Transaction): Promise<PlatformSettings> {
  const [rows] = await sequelize.query('SELECT key, value FROM platform_settings', { transaction });
  const settings: PlatformSettings = { ...DEFAULT_PLATFORM_SETTINGS };
  for (const row of rows as { key: string; value: unknown }[]) {
    if ((PLATFORM_SETTING_KEYS as string[]).includes(row.key)) {
      (settings as Record<string, unknown>)[row.key] = row.value;
    }
  }
  return settings;
}
