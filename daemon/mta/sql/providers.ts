// Provider shaping rules (table mta_providers, migration 0380): the shipped rules (mta/providers.ts
// DEFAULT_PROVIDERS) with the platform admins' rows laid over them, read by every MTA loop and by the
// platform routes. A change NOTIFYs SHAPING_CHANNEL so each loop reloads at once.
import { declare, type Sql } from '../../db/sql.ts';
import { DEFAULT_PROVIDERS, type ProviderShape } from '../providers.ts';

/** Every MTA loop LISTENs here and reloads its rules, reactions, suspensions and throttles. */
export const SHAPING_CHANNEL = 'svc_mta_shaping';

const LIST_PROVIDERS = declare(
  'mta_providers_list',
  `SELECT key, label, mx_patterns, max_connections, max_messages_per_connection, messages_per_minute, updated_at
     FROM mta_providers ORDER BY key`,
);

const UPSERT_PROVIDER = declare(
  'mta_providers_upsert',
  `
  WITH saved AS (
    INSERT INTO mta_providers (key, label, mx_patterns, max_connections, max_messages_per_connection, messages_per_minute)
    VALUES ($1, $2, $3::text[], $4, $5, $6)
    ON CONFLICT (key) DO UPDATE
       SET label = EXCLUDED.label, mx_patterns = EXCLUDED.mx_patterns, max_connections = EXCLUDED.max_connections,
           max_messages_per_connection = EXCLUDED.max_messages_per_connection,
           messages_per_minute = EXCLUDED.messages_per_minute, updated_at = now()
    RETURNING key
  )
  SELECT key, pg_notify('${SHAPING_CHANNEL}', '')::text AS notified FROM saved`,
);

interface ProviderRow {
  key: string;
  label: string;
  mx_patterns: string[];
  max_connections: number;
  max_messages_per_connection: number;
  messages_per_minute: number | null;
  updated_at: Date;
}

/** A provider rule as the loop and the platform admin see it: shipped, edited, or the admin's own. */
export interface ProviderRule extends ProviderShape {
  origin: 'shipped' | 'edited' | 'custom';
  updatedAt: Date | null;
}

/**
 * The rules in match order: the admins' own providers first (so one can carve a narrower pattern out
 * of a shipped provider), then the shipped ones as edited; `default` last.
 */
export async function loadProviderRules(sql: Sql): Promise<ProviderRule[]> {
  const rows = await sql.rows<ProviderRow>(LIST_PROVIDERS, []);
  const byKey = new Map(rows.map((row) => [row.key, row]));
  const shape = (row: ProviderRow): ProviderShape => ({
    key: row.key,
    label: row.label,
    mxPatterns: row.mx_patterns,
    maxConnections: row.max_connections,
    maxMessagesPerConnection: row.max_messages_per_connection,
    messagesPerMinute: row.messages_per_minute,
  });
  const shipped = new Set(DEFAULT_PROVIDERS.map((provider) => provider.key));
  const custom = rows
    .filter((row) => !shipped.has(row.key))
    .map((row): ProviderRule => ({ ...shape(row), origin: 'custom', updatedAt: row.updated_at }));
  const defaults = DEFAULT_PROVIDERS.map((provider): ProviderRule => {
    const row = byKey.get(provider.key);
    return row
      ? { ...shape(row), origin: 'edited', updatedAt: row.updated_at }
      : { ...provider, mxPatterns: [...provider.mxPatterns], origin: 'shipped', updatedAt: null };
  });
  return [...custom, ...defaults];
}

/** Writes a provider's whole rule (an override of a shipped one, or an admin's own) and tells the loops. */
export async function saveProviderRule(sql: Sql, rule: ProviderShape): Promise<void> {
  await sql.rows(UPSERT_PROVIDER, [
    rule.key,
    rule.label,
    rule.mxPatterns,
    rule.maxConnections,
    rule.maxMessagesPerConnection,
    rule.messagesPerMinute,
  ]);
}
