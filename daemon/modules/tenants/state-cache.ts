// What an API node remembers between requests about its tenants, so that the send path needs no
// read before its one insert: API keys by look-up prefix (with the tenant's status), and each
// tenant's state (status, plan and limit, quota cycle, pause, tracking defaults, usage as last seen).
// Created by buildApp, one per app, never at import.
//
// Staleness is bounded three ways:
//   - every change to those rows is announced on the `svc_tenant_state` channel by triggers
//     (migration 0250), whoever makes it; this node LISTENs and drops the tenant at once;
//   - a successful write through this node's API (other than a send) drops everything it cached,
//     before its answer leaves (see buildApp), so this node's own changes never wait on NOTIFY;
//   - entries live at most STATE_CACHE_TTL_MS (the safety net while LISTEN is down, e.g. on the
//     embedded PGlite, which cannot deliver notifications to other sessions).
// None of that is what makes a send correct: the accept statement re-checks the state it was given
// (emails/insert-accepted.ts) and the send path reloads on a mismatch; a refusal decided from the
// cache is confirmed against a fresh read before it is answered.
import type { Sql } from '../../db/sql.ts';
import { declare } from '../../db/sql.ts';
import { listenWithRetry } from '../../db/listen.ts';
import { quotaOfRow, TENANT_STATE, type QuotaStatus, type TenantStateRow } from '../quota/service.ts';

export const STATE_CACHE_TTL_MS = 10_000;
const STATE_CHANNEL = 'svc_tenant_state';
const MAX_ENTRIES = 10_000;
const LAST_USED_WRITE_INTERVAL_MS = 60_000;

export interface ResolvedApiKey {
  id: string;
  tenantId: string;
  tenantStatus: 'active' | 'blocked';
  prefix: string;
  keyHash: string;
  scopes: string[];
  environment: 'live' | 'test';
}

/** A tenant as last read. */
export interface TenantState {
  tenantId: string;
  row: TenantStateRow;
}

export interface TenantStateCache {
  /** The live (unrevoked) key with this look-up prefix, or null. */
  apiKey(prefix: string): Promise<ResolvedApiKey | null>;
  /** The tenant's state; `fresh` reads it now (and caches that). Null when the tenant is gone. */
  tenant(tenantId: string, options?: { fresh?: boolean }): Promise<TenantState | null>;
  /** The quota of a cached tenant without any read (null when not cached): for X-Quota-* headers. */
  cachedQuota(tenantId: string): QuotaStatus | null;
  /** An accept just reserved quota: `used` is the cycle's count right after it (exact, all nodes). */
  noteUsage(tenantId: string, cycleStart: Date, used: number): void;
  /** lastUsedAt of a key, written at most once a minute per key, off the request's path. */
  noteKeyUsed(apiKeyId: string): void;
  forgetTenant(tenantId: string): void;
  forgetAll(): void;
  close(): Promise<void>;
}

const KEY_BY_PREFIX = declare(
  'api-key.by-prefix',
  `
  SELECT k.id, k.tenant_id, t.status AS tenant_status, k.prefix, k.key_hash, k.scopes, k.environment
    FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
   WHERE k.prefix = $1 AND k.revoked_at IS NULL`,
);

const KEY_LIVE = declare('api-key.live', `SELECT 1 FROM api_keys WHERE id = $1 AND revoked_at IS NULL`);

/** A fresh read of a tenant's state (no cache). */
export async function loadTenantState(sql: Sql, tenantId: string): Promise<TenantState | null> {
  const [row] = await sql.rows<TenantStateRow>(TENANT_STATE, [tenantId]);
  return row ? { tenantId, row } : null;
}

/** Whether the key is still live, read now. */
export async function apiKeyIsLive(sql: Sql, apiKeyId: string): Promise<boolean> {
  return (await sql.rows(KEY_LIVE, [apiKeyId])).length > 0;
}

const KEY_USED = declare('api-key.used', `UPDATE api_keys SET last_used_at = $2 WHERE id = $1`);

interface Entry<T> {
  value: T;
  expiresAt: number;
}

export interface TenantStateCacheOptions {
  sql: Sql;
  /** Where to LISTEN; null listens nowhere (TTL only). */
  listenUrl: string | null;
  onListenError?: (error: Error) => void;
}

export async function createTenantStateCache(options: TenantStateCacheOptions): Promise<TenantStateCache> {
  const { sql } = options;
  const keys = new Map<string, Entry<ResolvedApiKey | null>>();
  const tenants = new Map<string, Entry<TenantState | null>>();
  const loading = new Map<string, Promise<unknown>>();
  const keyWrites = new Map<string, number>();
  // Bumped by every forget: a read that started before a forget must not store its (maybe stale) row.
  let generation = 0;
  let closed = false;

  const forgetTenant = (tenantId: string) => {
    generation += 1;
    tenants.delete(tenantId);
    for (const [prefix, entry] of keys) if (entry.value?.tenantId === tenantId) keys.delete(prefix);
  };
  const forgetAll = () => {
    generation += 1;
    tenants.clear();
    keys.clear();
  };

  /** One read per key at a time: 64 requests that miss together share it. */
  async function cached<T>(
    kind: 'key' | 'tenant',
    map: Map<string, Entry<T>>,
    id: string,
    fresh: boolean,
    load: () => Promise<T>,
  ): Promise<T> {
    const now = Date.now();
    const hit = map.get(id);
    if (!fresh && hit && hit.expiresAt > now) return hit.value;
    const loadKey = `${kind}:${id}`;
    const pending = !fresh ? (loading.get(loadKey) as Promise<T> | undefined) : undefined;
    if (pending) return pending;
    const startedAt = generation;
    const promise = load().then((value) => {
      if (generation === startedAt && !closed) {
        if (map.size >= MAX_ENTRIES) map.clear();
        map.set(id, { value, expiresAt: Date.now() + STATE_CACHE_TTL_MS });
      }
      return value;
    });
    if (!fresh) loading.set(loadKey, promise);
    try {
      return await promise;
    } finally {
      if (loading.get(loadKey) === promise) loading.delete(loadKey);
    }
  }

  async function loadKey(prefix: string): Promise<ResolvedApiKey | null> {
    const [row] = await sql.rows<{
      id: string;
      tenant_id: string;
      tenant_status: 'active' | 'blocked';
      prefix: string;
      key_hash: string;
      scopes: string[];
      environment: 'live' | 'test';
    }>(KEY_BY_PREFIX, [prefix]);
    if (!row) return null;
    return {
      id: row.id,
      tenantId: row.tenant_id,
      tenantStatus: row.tenant_status,
      prefix: row.prefix,
      keyHash: row.key_hash,
      scopes: row.scopes,
      environment: row.environment,
    };
  }

  // A tenant's change drops that tenant; what was announced while the connection was away is unknown,
  // so a (re)start forgets all.
  const listening = await listenWithRetry({
    url: options.listenUrl,
    channel: STATE_CHANNEL,
    onNotification: (tenantId) => {
      if (tenantId) forgetTenant(tenantId);
    },
    onReset: forgetAll,
    onError: options.onListenError,
  });

  return {
    apiKey: (prefix) => cached('key', keys, prefix, false, () => loadKey(prefix)),
    tenant: (tenantId, opts) =>
      cached('tenant', tenants, tenantId, opts?.fresh === true, () => loadTenantState(sql, tenantId)),
    cachedQuota(tenantId) {
      const hit = tenants.get(tenantId);
      return hit && hit.value && hit.expiresAt > Date.now() ? quotaOfRow(hit.value.row) : null;
    },
    noteUsage(tenantId, cycleStart, used) {
      const hit = tenants.get(tenantId)?.value;
      if (!hit) return;
      const start = cycleStart.toISOString();
      const others = (hit.row.usage ?? []).filter((u) => new Date(u.cycleStart).getTime() !== cycleStart.getTime());
      const before = (hit.row.usage ?? []).find((u) => new Date(u.cycleStart).getTime() === cycleStart.getTime());
      // Answers of concurrent accepts arrive in any order: usage only grows within a cycle.
      hit.row = { ...hit.row, usage: [...others, { cycleStart: start, used: Math.max(used, before?.used ?? 0) }] };
    },
    noteKeyUsed(apiKeyId) {
      const now = Date.now();
      if (now - (keyWrites.get(apiKeyId) ?? 0) < LAST_USED_WRITE_INTERVAL_MS) return;
      if (keyWrites.size >= MAX_ENTRIES) keyWrites.clear();
      keyWrites.set(apiKeyId, now);
      sql.count(KEY_USED, [apiKeyId, new Date(now)]).catch(() => keyWrites.delete(apiKeyId));
    },
    forgetTenant,
    forgetAll,
    async close() {
      closed = true;
      await listening.close();
      forgetAll();
    },
  };
}
