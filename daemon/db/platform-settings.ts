// Platform settings as every layer reads them: defaults from shared/schemas/platform.ts, overridden
// by rows of platform_settings. Infrastructure (mail/, domains, auth, retention and the inbound
// listener read it); writing them is the platform module's (modules/platform/service.ts).
import type { Sequelize, Transaction } from 'sequelize';
import { DEFAULT_PLATFORM_SETTINGS, type PlatformSettings } from '../../shared/schemas/platform.ts';
import { cachedLoad, TtlCache } from '../ttl-cache.ts';

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

/**
 * How long a per-message path keeps the settings it read: an admin's change reaches the other processes
 * within it (the process that made the change forgets its copy at once), as send-context.ts's signing keys do.
 */
export const PLATFORM_SETTINGS_CACHE_TTL_MS = 60_000;

// One kept read per database handle (tests run several), created on first use.
const kept = new WeakMap<Sequelize, TtlCache<Promise<PlatformSettings>>>();

/**
 * The settings as last read, at most PLATFORM_SETTINGS_CACHE_TTL_MS old: for paths that run once per
 * message (the inbound listener's SRS addresses, forwards), where a read per message would be a
 * statement per message for a row that changes a few times a year. Reads that must see a change at
 * once (the admin API, a check after a write) use getPlatformSettings.
 */
export function cachedPlatformSettings(sequelize: Sequelize): Promise<PlatformSettings> {
  let cache = kept.get(sequelize);
  if (!cache) kept.set(sequelize, (cache = new TtlCache<Promise<PlatformSettings>>(PLATFORM_SETTINGS_CACHE_TTL_MS, 1)));
  return cachedLoad(cache, 'settings', () => getPlatformSettings(sequelize));
}

/** Drops this process's kept read (after the platform module changes the settings). */
export function forgetCachedPlatformSettings(sequelize: Sequelize): void {
  kept.get(sequelize)?.clear();
}
