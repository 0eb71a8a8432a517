// Delivery shaping (platform admins): the calls behind `svc providers …` and `svc tenants throttle`.
import type { SvcClient } from '../client.ts';
import { CliFailure, EXIT } from '../errors.ts';
import type {
  CreateProviderBody,
  CreateReactionRuleBody,
  LiftedReactionBody,
  ReactionRuleBody,
  UpdateReactionRuleBody,
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

const rulePath = (ruleId: string) => `/platform/reaction-rules/${encodeURIComponent(ruleId)}`;

export function createReactionRule(client: SvcClient, rule: CreateReactionRuleBody) {
  return client.http.request<ReactionRuleBody>('POST', '/platform/reaction-rules', { json: rule, tenant: false });
}

export function updateReactionRule(client: SvcClient, ruleId: string, changes: UpdateReactionRuleBody) {
  return client.http.request<ReactionRuleBody>('PATCH', rulePath(ruleId), { json: changes, tenant: false });
}

export function removeReactionRule(client: SvcClient, ruleId: string) {
  return client.http.request<{ ok: true }>('DELETE', rulePath(ruleId), { tenant: false });
}

export function liftReaction(client: SvcClient, reactionId: string) {
  return client.http.request<LiftedReactionBody>('DELETE', `/platform/reactions/${encodeURIComponent(reactionId)}`, {
    tenant: false,
  });
}

/** The rule fields the flags of `svc providers rules add|set` give (undefined: not given; "none" clears). */
export function ruleFieldsOfFlags(flags: {
  priority?: number;
  provider?: string;
  code?: string;
  'enhanced-code'?: string;
  text?: string;
  action?: string;
  scope?: string;
  minutes?: string;
  factor?: string;
  description?: string;
}): UpdateReactionRuleBody {
  const cleared = (value: string | undefined) => (value === undefined ? undefined : value === 'none' ? null : value);
  const fields: UpdateReactionRuleBody = {};
  if (flags.priority !== undefined) fields.priority = flags.priority;
  const provider = cleared(flags.provider);
  if (provider !== undefined) fields.providerKey = provider;
  const code = limitFlag('code', flags.code, 'integer');
  if (code !== undefined) fields.replyCode = code;
  const enhanced = cleared(flags['enhanced-code']);
  if (enhanced !== undefined) fields.enhancedCode = enhanced;
  const text = cleared(flags.text);
  if (text !== undefined) fields.textPattern = text;
  if (flags.action !== undefined) fields.action = flags.action as ReactionRuleBody['action'];
  if (flags.scope !== undefined) fields.scope = flags.scope as ReactionRuleBody['scope'];
  const minutes = limitFlag('minutes', flags.minutes, 'integer');
  if (minutes !== undefined) fields.minutes = minutes;
  const factor = limitFlag('factor', flags.factor, 'number');
  if (factor !== undefined) fields.factor = factor;
  if (flags.description !== undefined) fields.description = flags.description;
  return fields;
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
