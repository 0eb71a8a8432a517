// Delivery shaping as platform admins read and change it (docs/mta.md "Shaping and reactions"):
// provider rules (shipped ones edited, or the admin's own), the reaction rules and what they did, and
// per-tenant throttles. Every change NOTIFYs the MTA loops, which reload at once (mta/shaping.ts).
import type { AppDeps } from '../../app-types.ts';
import type { AdminContext } from '../../context.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.ts';
import { DEFAULT_PROVIDER_KEY } from '../../mta/providers.ts';
import { loadProviderRules, saveProviderRule, type ProviderRule } from '../../mta/sql/providers.ts';
import { listActiveReactions, loadReactionRules } from '../../mta/sql/reactions.ts';
import { getTenantThrottle, liveWorkerNodes, setTenantThrottle } from '../../mta/sql/throttles.ts';
import { recordAudit } from '../audit/service.ts';
import { NODE_SEEN_WITHIN_MS } from '../doctor/nodes.ts';
import { Tenant } from '../tenants/model.ts';
import type { Sql } from '../../db/sql.ts';
import type {
  ActiveReactionBody,
  CreateProviderBody,
  ProviderRuleBody,
  ProviderRulesBody,
  ReactionsBody,
  SetTenantThrottleBody,
  TenantThrottleBody,
  UpdateProviderBody,
} from '../../../shared/schemas/shaping.ts';

export type ShapingDeps = Pick<AppDeps, 'db'>;
type Actor = AdminContext & { ip?: string };

function providerBody(rule: ProviderRule): ProviderRuleBody {
  return {
    key: rule.key,
    label: rule.label,
    mxPatterns: rule.mxPatterns,
    maxConnections: rule.maxConnections,
    maxMessagesPerConnection: rule.maxMessagesPerConnection,
    messagesPerMinute: rule.messagesPerMinute,
    origin: rule.origin,
    updatedAt: rule.updatedAt ? rule.updatedAt.toISOString() : null,
  };
}

export async function listProviders(deps: ShapingDeps): Promise<ProviderRulesBody> {
  const { sql } = deps.db;
  const [rules, workerNodes] = await Promise.all([loadProviderRules(sql), liveWorkerNodes(sql, NODE_SEEN_WITHIN_MS)]);
  return { data: rules.map(providerBody), workerNodes };
}

async function findProvider(deps: ShapingDeps, key: string): Promise<ProviderRule | undefined> {
  return (await loadProviderRules(deps.db.sql)).find((rule) => rule.key === key);
}

/** Changes the fields given (the others keep their value); a shipped rule becomes `edited`. */
export async function updateProvider(
  deps: ShapingDeps,
  actor: Actor,
  input: { key: string; changes: UpdateProviderBody },
): Promise<ProviderRuleBody> {
  const current = await findProvider(deps, input.key);
  if (!current) throw new NotFoundError('Provider');
  const { changes } = input;
  if (input.key === DEFAULT_PROVIDER_KEY && changes.mxPatterns && changes.mxPatterns.length > 0)
    throw new ValidationError('The default provider matches what no other provider matches: it takes no MX patterns.', [
      { field: 'mxPatterns', message: 'must be empty for default' },
    ]);
  await saveProviderRule(deps.db.sql, {
    key: current.key,
    label: changes.label ?? current.label,
    mxPatterns: changes.mxPatterns ?? current.mxPatterns,
    maxConnections: changes.maxConnections ?? current.maxConnections,
    maxMessagesPerConnection: changes.maxMessagesPerConnection ?? current.maxMessagesPerConnection,
    messagesPerMinute: changes.messagesPerMinute === undefined ? current.messagesPerMinute : changes.messagesPerMinute,
  });
  await recordAudit({
    action: 'platform.provider_updated',
    adminId: actor.adminId,
    ip: actor.ip,
    target: current.key,
    metadata: { changed: Object.keys(changes) },
  });
  return providerBody((await findProvider(deps, input.key))!);
}

/** A provider of the admin's own (matched before the shipped ones). */
export async function createProvider(
  deps: ShapingDeps,
  actor: Actor,
  input: CreateProviderBody,
): Promise<ProviderRuleBody> {
  if (await findProvider(deps, input.key))
    throw new ConflictError(`A provider "${input.key}" exists: change it with PUT.`);
  await saveProviderRule(deps.db.sql, { ...input, messagesPerMinute: input.messagesPerMinute ?? null });
  await recordAudit({
    action: 'platform.provider_updated',
    adminId: actor.adminId,
    ip: actor.ip,
    target: input.key,
    metadata: { created: true },
  });
  return providerBody((await findProvider(deps, input.key))!);
}

/** The reactions in force, as GET /platform/reactions and the queue view (GET /platform/queue) show them. */
export async function activeReactionBodies(sql: Sql): Promise<ActiveReactionBody[]> {
  return (await listActiveReactions(sql)).map((reaction) => ({
    ...reaction,
    until: reaction.until ? reaction.until.toISOString() : null,
    createdAt: reaction.createdAt.toISOString(),
  }));
}

export async function listReactions(deps: ShapingDeps): Promise<ReactionsBody> {
  const { sql } = deps.db;
  const [rules, active] = await Promise.all([loadReactionRules(sql), activeReactionBodies(sql)]);
  return { rules, active };
}

async function requireTenant(tenantId: string): Promise<void> {
  if (!(await Tenant.findByPk(tenantId, { attributes: ['id'] }))) throw new NotFoundError('Tenant');
}

export async function readTenantThrottle(_deps: ShapingDeps, input: { tenantId: string }): Promise<TenantThrottleBody> {
  await requireTenant(input.tenantId);
  return getTenantThrottle(_deps.db.sql, input.tenantId);
}

export async function changeTenantThrottle(
  deps: ShapingDeps,
  actor: Actor,
  input: { tenantId: string; throttle: SetTenantThrottleBody },
): Promise<TenantThrottleBody> {
  await requireTenant(input.tenantId);
  await setTenantThrottle(deps.db.sql, { tenantId: input.tenantId, ...input.throttle });
  await recordAudit({
    action: 'tenant.throttle_updated',
    tenantId: input.tenantId,
    adminId: actor.adminId,
    ip: actor.ip,
    target: input.tenantId,
    metadata: { ...input.throttle },
  });
  return getTenantThrottle(deps.db.sql, input.tenantId);
}
