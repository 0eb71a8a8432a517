// Delivery shaping (platform admins): the calls behind `svc providers …` and `svc tenants throttle`.
import type { SvcClient } from '../client.ts';
import { CliFailure, EXIT } from '../errors.ts';
import type {
  CreateProviderBody,
  ProviderRuleBody,
  ProviderRulesBody,
  ReactionsBody,
  SetTenantThrottleBody,
  TenantThrottleBody,
  UpdateProviderBody,
} from '../../shared/schemas/shaping.ts';

export function listProviders(client: SvcClient) {
  return client.http.request<ProviderRulesBody>('GET', '/platform/providers', { tenant: false });
}

export function listReactions(client: SvcClient) {
  return client.http.request<ReactionsBody>('GET', '/platform/reactions', { tenant: false });
}

export function updateProvider(client: SvcClient, key: string, changes: UpdateProviderBody) {
  return client.http.request<ProviderRuleBody>('PUT', `/platform/providers/${encodeURIComponent(key)}`, {
    json: changes,
    tenant: false,
  });
}

export function createProvider(client: SvcClient, provider: CreateProviderBody) {
  return client.http.request<ProviderRuleBody>('POST', '/platform/providers', { json: provider, tenant: false });
}

const throttlePath = (tenantId: string) => `/platform/tenants/${encodeURIComponent(tenantId)}/throttle`;

export function readThrottle(client: SvcClient, tenantId: string) {
  return client.http.request<TenantThrottleBody>('GET', throttlePath(tenantId), { tenant: false });
}

export function changeThrottle(client: SvcClient, tenantId: string, throttle: SetTenantThrottleBody) {
  return client.http.request<TenantThrottleBody>('PUT', throttlePath(tenantId), { json: throttle, tenant: false });
}

/** A flag's value as a positive number, `none` (null: no limit), or undefined when not given. */
export function limitFlag(
  name: string,
  value: string | undefined,
  kind: 'integer' | 'number',
): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === 'none') return null;
  const parsed = Number(value);
  const valid = kind === 'integer' ? Number.isInteger(parsed) && parsed >= 1 : Number.isFinite(parsed) && parsed > 0;
  if (!/^\d+(\.\d+)?$/.test(value) || !valid)
    throw new CliFailure(
      `--${name} takes a ${kind === 'integer' ? 'whole number' : 'number'} above 0, or "none".`,
      EXIT.usage,
      'BAD_FLAG',
    );
  return parsed;
}

/** `60/min`-style rate for tables: "—" when none. */
export function rateText(value: number | null, unit: string): string {
  return value === null ? '—' : `${value}/${unit}`;
}
