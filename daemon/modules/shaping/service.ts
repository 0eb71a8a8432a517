// Delivery shaping as platform admins read and change it (docs/mta.md "Shaping and reactions"):
// provider rules (shipped ones edited, or the admin's own), the reaction rules and what they did, and
// per-tenant throttles. Every change NOTIFYs the MTA loops, which reload at once (mta/shaping.ts).
import type { AppDeps } from '../../app-types.ts';
import type { AdminContext } from '../../context.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.ts';
import { DEFAULT_PROVIDER_KEY } from '../../mta/providers.ts';
import { loadProviderRules, saveProviderRule, type ProviderRule } from '../../mta/sql/providers.ts';
import {
  deleteReactionRule,
  liftSuspension,
  listActiveReactions,
  listReactionRules,
  saveReactionRule,
  type RuleFields,
} from '../../mta/sql/reactions.ts';
import { compilePattern } from '../../mta/reactions.ts';
import { getTenantThrottle, liveWorkerNodes, setTenantThrottle } from '../../mta/sql/throttles.ts';
import { assertThrottleApplies } from './throttle-delivery.ts';
import { recordAudit } from '../audit/service.ts';
import { NODE_SEEN_WITHIN_MS } from '../../db/nodes.ts';
import { modelsOf } from '../models.ts';
import type { Sql } from '../../db/sql.ts';
import type {
  ActiveReactionBody,
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
  await recordAudit(deps.db.sequelize, {
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
  await recordAudit(deps.db.sequelize, {
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
  const [rules, active] = await Promise.all([listReactionRules(sql), activeReactionBodies(sql)]);
  return { data: active, rules: rules.map(withPatternProblem) };
}

/** What is wrong with a rule as it would be saved, as the 400 the loops must never see. */
async function checkRule(deps: ShapingDeps, rule: RuleFields): Promise<void> {
  const problem = (field: string, message: string, sentence: string) => {
    throw new ValidationError(sentence, [{ field, message }]);
  };
  if (rule.replyCode === null && rule.enhancedCode === null && rule.textPattern === null)
    problem(
      'replyCode',
      'give a reply code, an enhanced code or a text pattern',
      'A rule that matches every reply would react to every deferral: give a replyCode, an enhancedCode or a textPattern.',
    );
  const compiled = rule.textPattern === null ? null : compilePattern(rule.textPattern);
  if (compiled && !compiled.ok)
    problem(
      'textPattern',
      `not a pattern the MTA can run: ${compiled.problem}`,
      `textPattern /${rule.textPattern}/ is refused: ${compiled.problem}. Reaction patterns are RE2 regular expressions ` +
        '(no backreferences or lookaround), matched in time linear in the reply.',
    );
  if (rule.action === 'pause_tenant') {
    if (rule.minutes !== null || rule.factor !== null)
      problem(
        'minutes',
        'a tenant pause takes no minutes or factor',
        'A tenant pause lasts until an owner resumes sending: it takes no minutes or factor.',
      );
  } else {
    if (rule.minutes === null)
      problem('minutes', 'required', `A ${rule.action} lasts a number of minutes: give minutes (1 to 10080).`);
    if (rule.action === 'slow' && rule.factor === null)
      problem(
        'factor',
        'required',
        "A slow-down multiplies the provider's connections and rate by a factor between 0 and 1: give factor.",
      );
    if (rule.action === 'suspend' && rule.factor !== null)
      problem('factor', 'only a slow-down takes a factor', 'A suspension stops delivery: it takes no factor.');
  }
  if (rule.providerKey !== null && !(await findProvider(deps, rule.providerKey)))
    problem(
      'providerKey',
      'no such provider',
      `There is no provider "${rule.providerKey}" (see GET /platform/providers).`,
    );
}

/** A stored pattern RE2 cannot run (saved before it was the engine) is reported: the rule matches nothing. */
function withPatternProblem<T extends { textPattern: string | null }>(rule: T): T & { patternProblem: string | null } {
  const compiled = rule.textPattern === null ? null : compilePattern(rule.textPattern);
  return { ...rule, patternProblem: compiled && !compiled.ok ? compiled.problem : null };
}

async function findRule(deps: ShapingDeps, ruleId: string): Promise<ReactionRuleBody | undefined> {
  const rule = (await listReactionRules(deps.db.sql)).find((candidate) => candidate.id === ruleId);
  return rule && withPatternProblem(rule);
}

/** A new reaction rule; the loops match it from their next reload (at once: NOTIFY). */
export async function createReactionRule(
  deps: ShapingDeps,
  actor: Actor,
  input: CreateReactionRuleBody,
): Promise<ReactionRuleBody> {
  const rule: RuleFields = {
    priority: input.priority ?? 100,
    providerKey: input.providerKey ?? null,
    replyCode: input.replyCode ?? null,
    enhancedCode: input.enhancedCode ?? null,
    textPattern: input.textPattern ?? null,
    action: input.action,
    scope: input.scope ?? 'provider',
    minutes: input.minutes ?? null,
    factor: input.factor ?? null,
    description: input.description,
    enabled: input.enabled ?? true,
  };
  await checkRule(deps, rule);
  const id = await saveReactionRule(deps.db.sql, null, rule);
  await recordAudit(deps.db.sequelize, {
    action: 'platform.reaction_rule_changed',
    adminId: actor.adminId,
    ip: actor.ip,
    target: id,
    metadata: { created: true },
  });
  return (await findRule(deps, id))!;
}

/** Changes the fields given (null clears a nullable one); a disabled rule matches nothing. */
export async function updateReactionRule(
  deps: ShapingDeps,
  actor: Actor,
  input: { ruleId: string; changes: UpdateReactionRuleBody },
): Promise<ReactionRuleBody> {
  const current = await findRule(deps, input.ruleId);
  if (!current) throw new NotFoundError('Reaction rule');
  const { id, ...fields } = current;
  const rule: RuleFields = { ...fields };
  for (const [key, value] of Object.entries(input.changes))
    if (value !== undefined) (rule as unknown as Record<string, unknown>)[key] = value;
  await checkRule(deps, rule);
  await saveReactionRule(deps.db.sql, id, rule);
  await recordAudit(deps.db.sequelize, {
    action: 'platform.reaction_rule_changed',
    adminId: actor.adminId,
    ip: actor.ip,
    target: id,
    metadata: { changed: Object.keys(input.changes) },
  });
  return (await findRule(deps, id))!;
}

/** Removes a rule; the reactions it drew stay listed, without its description. */
export async function removeReactionRule(
  deps: ShapingDeps,
  actor: Actor,
  input: { ruleId: string },
): Promise<{ ok: true }> {
  if (!(await deleteReactionRule(deps.db.sql, input.ruleId))) throw new NotFoundError('Reaction rule');
  await recordAudit(deps.db.sequelize, {
    action: 'platform.reaction_rule_changed',
    adminId: actor.adminId,
    ip: actor.ip,
    target: input.ruleId,
    metadata: { removed: true },
  });
  return { ok: true };
}

/**
 * Ends a suspension or slow-down before its time (the provider said it is fine again, the rule was
 * wrong): the loops stop applying it at once (NOTIFY), and the rows given back to its end are due now.
 * A tenant pause is lifted where it was set: POST /tenants/{id}/resume-sending.
 */
export async function liftReaction(
  deps: ShapingDeps,
  actor: Actor,
  input: { reactionId: string },
): Promise<LiftedReactionBody> {
  const active = (await listActiveReactions(deps.db.sql)).find((reaction) => reaction.id === input.reactionId);
  if (!active) throw new NotFoundError('Reaction in force');
  if (active.kind === 'pause_tenant')
    throw new ConflictError(
      `This reaction paused tenant ${active.tenantId}: lift it with POST /tenants/${active.tenantId}/resume-sending (svc tenants resume-sending).`,
    );
  const { lifted, due } = await liftSuspension(deps.db.sql, input.reactionId);
  if (!lifted) throw new NotFoundError('Reaction in force');
  await recordAudit(deps.db.sequelize, {
    action: 'platform.reaction_lifted',
    adminId: actor.adminId,
    ip: actor.ip,
    target: input.reactionId,
    metadata: { provider: active.providerKey, domain: active.domain, kind: active.kind, rowsDue: due },
  });
  return { id: input.reactionId, rowsDue: due };
}

async function requireTenant(deps: ShapingDeps, tenantId: string): Promise<void> {
  if (!(await modelsOf(deps.db.sequelize).Tenant.findByPk(tenantId, { attributes: ['id'] })))
    throw new NotFoundError('Tenant');
}

export async function readTenantThrottle(deps: ShapingDeps, input: { tenantId: string }): Promise<TenantThrottleBody> {
  await requireTenant(deps, input.tenantId);
  return getTenantThrottle(deps.db.sql, input.tenantId);
}

export async function changeTenantThrottle(
  deps: ShapingDeps & Pick<AppDeps, 'config'>,
  actor: Actor,
  input: { tenantId: string; throttle: SetTenantThrottleBody },
): Promise<TenantThrottleBody> {
  await requireTenant(deps, input.tenantId);
  const { messagesPerSecond, messagesPerHour } = input.throttle;
  if (messagesPerSecond !== null || messagesPerHour !== null)
    await assertThrottleApplies(deps.db.sequelize, deps.config);
  await setTenantThrottle(deps.db.sql, { tenantId: input.tenantId, ...input.throttle });
  await recordAudit(deps.db.sequelize, {
    action: 'tenant.throttle_updated',
    tenantId: input.tenantId,
    adminId: actor.adminId,
    ip: actor.ip,
    target: input.tenantId,
    metadata: { ...input.throttle },
  });
  return getTenantThrottle(deps.db.sql, input.tenantId);
}
