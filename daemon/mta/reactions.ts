// Reactions to providers' replies (issue 29, docs/mta.md "Shaping and reactions"): a deferral or a
// refusal whose reply matches a rule (mta_reaction_rules: provider, reply code, enhanced code, text)
// suspends the provider or one destination for a while, lowers its rate for a while, or pauses the
// tenant whose message drew it. Matching is pure (the loop applies the match in its own process at
// once); recording happens in the batch's transaction with the attempt that carried the reply: the
// suspension row (or the tenant pause), and for a new one an event and webhook `delivery.reaction`.
import { errorText } from '../errors.ts';
import { RE2JS } from 're2js';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { RecipientResult } from './connection.ts';
import { enhancedCodeOf } from './outcome.ts';
import { DEFAULT_PROVIDER_KEY } from './providers.ts';
import { recordReactionStatement, type ReactionRecord, type ReactionRule } from './sql/reactions.ts';

/** A session failure names its host first (`mx.example [192.0.2.1]: 421 …`); the reply follows. */
function replyOf(response: string): string {
  return response.replace(/^\S+ \[[^\]]+\]: /, '').trim();
}

function replyCodeOf(reply: string): number | null {
  const match = /^([245]\d\d)\b/.exec(reply);
  return match ? Number(match[1]) : null;
}

/** A compiled reaction pattern, or why it does not compile. */
export type CompiledPattern = { ok: true; regex: RE2JS } | { ok: false; problem: string };

// A memo of compiled patterns by text (a pure function of a constant: kept at module level). Patterns are
// matched with RE2 (re2js), in time linear in the reply: the replies are written by remote servers and
// matched in the MTA thread, where a backtracking engine over `^(a+)+$` would hold every delivery.
const patterns = new Map<string, CompiledPattern>();
const MAX_MEMO = 1_000;

/**
 * Rules are data: a stored pattern that does not compile (saved before RE2 was the engine, or by hand)
 * matches nothing and is reported by GET /platform/reaction-rules (`patternProblem`) and `svc providers`;
 * the API refuses such a pattern when a rule is saved.
 */
export function compilePattern(pattern: string): CompiledPattern {
  let compiled = patterns.get(pattern);
  if (!compiled) {
    try {
      compiled = { ok: true, regex: RE2JS.compile(pattern, RE2JS.CASE_INSENSITIVE) };
    } catch (error) {
      compiled = { ok: false, problem: errorText(error) };
    }
    if (patterns.size >= MAX_MEMO) patterns.clear();
    patterns.set(pattern, compiled);
  }
  return compiled;
}

export function ruleMatches(rule: ReactionRule, providerKey: string, reply: string): boolean {
  if (rule.providerKey !== null && rule.providerKey !== providerKey) return false;
  if (rule.replyCode !== null && replyCodeOf(reply) !== rule.replyCode) return false;
  if (rule.enhancedCode !== null && enhancedCodeOf(reply) !== rule.enhancedCode) return false;
  if (rule.textPattern !== null) {
    const pattern = compilePattern(rule.textPattern);
    if (!pattern.ok || !pattern.regex.test(reply)) return false;
  }
  return true;
}

/**
 * The reaction an attempt's replies call for: the first rule (rules come ordered by priority) that a
 * deferral's or refusal's reply matches. `default` is not one provider, so a rule scoped to the
 * provider acts on the one destination there.
 */
export function reactionTo(
  rules: readonly ReactionRule[],
  attempt: { providerKey: string; domain: string; tenantId: string | null; emailId: string | null },
  results: readonly RecipientResult[],
): ReactionRecord | null {
  for (const result of results) {
    if (result.verdict.kind === 'delivered') continue;
    const reply = replyOf(result.verdict.response);
    for (const rule of rules) {
      if (!ruleMatches(rule, attempt.providerKey, reply)) continue;
      const scope = attempt.providerKey === DEFAULT_PROVIDER_KEY ? 'destination' : rule.scope;
      return {
        rule: { ...rule, scope },
        providerKey: attempt.providerKey,
        domain: scope === 'destination' || rule.action === 'pause_tenant' ? attempt.domain : null,
        reply,
        tenantId: attempt.tenantId,
        emailId: attempt.emailId,
      };
    }
  }
  return null;
}

/**
 * Raises a tenant's event and its webhooks in the caller's transaction: webhooks/events.ts's emitEvent,
 * handed in by jobs/mta-loop.ts (a port: mta/ sits below the modules and imports none).
 */
export type EmitEvent = (
  sequelize: Sequelize,
  event: { tenantId: string; type: 'delivery.reaction'; emailId: string | null; data: Record<string, unknown> },
  transaction: Transaction,
) => Promise<unknown>;

/**
 * Records a reaction in the caller's transaction. Only a new one (not already in force: the other
 * rows in flight drew the same reply) becomes an event and webhook for the tenant whose mail drew it;
 * system mail has no tenant to tell.
 */
export async function recordReaction(
  sequelize: Sequelize,
  reaction: ReactionRecord,
  transaction: Transaction,
  emitEvent: EmitEvent,
): Promise<boolean> {
  const statement = recordReactionStatement(reaction);
  const rows = await sequelize.query<{ id: string; until: Date | null }>(statement.text, {
    bind: statement.values,
    type: QueryTypes.SELECT,
    transaction,
  });
  if (rows.length === 0) return false;
  if (reaction.tenantId) {
    const { rule } = reaction;
    await emitEvent(
      sequelize,
      {
        tenantId: reaction.tenantId,
        type: 'delivery.reaction',
        emailId: reaction.emailId,
        data: {
          reactionId: rows[0].id,
          provider: reaction.providerKey,
          domain: reaction.domain,
          action: rule.action,
          factor: rule.factor,
          until: rows[0].until ? new Date(rows[0].until).toISOString() : null,
          reply: reaction.reply,
          rule: rule.description,
          emailId: reaction.emailId,
        },
      },
      transaction,
    );
  }
  return true;
}
