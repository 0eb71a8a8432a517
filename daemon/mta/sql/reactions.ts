// Reaction rules and what they did (tables mta_reaction_rules, mta_provider_suspensions; migrations
// 0381, 0382). The loop reads the rules and the active suspensions; a settlement whose reply matched a
// rule records the reaction in the batch's transaction (recordReactionStatement); the queue view and
// `svc providers` list what is active (listActiveReactions).
import { declare, type Sql } from '../../db/sql.ts';
import { SHAPING_CHANNEL } from './providers.ts';
import { SPOOL_CHANNEL } from './spool.ts';

export type ReactionAction = 'suspend' | 'slow' | 'pause_tenant';

export interface ReactionRule {
  id: string;
  priority: number;
  /** Null: any provider. */
  providerKey: string | null;
  replyCode: number | null;
  enhancedCode: string | null;
  /** A case-insensitive JavaScript regular expression over the reply. */
  textPattern: string | null;
  action: ReactionAction;
  /** `provider`: every destination of the provider; `destination`: the one domain. */
  scope: 'provider' | 'destination';
  minutes: number | null;
  factor: number | null;
  description: string;
}

/** A suspension or slow-down in force, as the loop applies it. */
export interface ActiveSuspension {
  providerKey: string;
  /** Null: every destination of the provider. */
  domain: string | null;
  kind: 'suspend' | 'slow';
  factor: number | null;
  until: Date;
}

/** One line of the queue view: a reaction still in force. */
export interface ActiveReaction {
  id: string;
  providerKey: string;
  domain: string | null;
  kind: ReactionAction;
  factor: number | null;
  /** Null for a tenant pause: it lasts until an owner resumes sending. */
  until: Date | null;
  reason: string;
  rule: string | null;
  tenantId: string | null;
  createdAt: Date;
}

const LIST_RULES = declare(
  'mta_reaction_rules_list',
  `SELECT id::text AS id, priority, provider_key, reply_code, enhanced_code, text_pattern, action, scope, minutes, factor, description, enabled
     FROM mta_reaction_rules WHERE enabled ORDER BY priority, created_at`,
);

const ACTIVE_SUSPENSIONS = declare(
  'mta_suspensions_active',
  `SELECT provider_key, domain, kind, factor, until FROM mta_provider_suspensions
    WHERE kind IN ('suspend', 'slow') AND until > now()`,
);

// A tenant pause is in force while the tenant's pause is still the one this reaction set (same
// transaction, same now()); an owner's resume, or a later pause for another reason, ends the line.
const ACTIVE_REACTIONS = declare(
  'mta_reactions_active',
  `SELECT s.id::text AS id, s.provider_key, s.domain, s.kind, s.factor, s.until, s.reason, r.description AS rule,
          s.tenant_id::text AS tenant_id, s.created_at
     FROM mta_provider_suspensions s LEFT JOIN mta_reaction_rules r ON r.id = s.rule_id
    WHERE (s.kind <> 'pause_tenant' AND s.until > now())
       OR (s.kind = 'pause_tenant' AND EXISTS (
             SELECT 1 FROM tenants t WHERE t.id = s.tenant_id AND t.sending_paused_at = s.created_at))
    ORDER BY s.created_at DESC
    LIMIT 500`,
);

// One suspension or slow-down per (provider, destination, kind) at a time: the in-flight rows that
// drew the same reply add nothing. Two nodes racing may both insert; the loops take the latest end.
const RECORD_SUSPENSION = declare(
  'mta_suspension_record',
  `
  WITH fresh AS (
    INSERT INTO mta_provider_suspensions (provider_key, domain, kind, factor, until, reason, rule_id, tenant_id, email_id)
    SELECT $1::text, $2::text, $3::text, $4::real, now() + $5::int * interval '1 minute', $6::text, $7::uuid, $8::uuid, $9::uuid
     WHERE NOT EXISTS (SELECT 1 FROM mta_provider_suspensions
                        WHERE provider_key = $1::text AND domain IS NOT DISTINCT FROM $2::text AND kind = $3::text AND until > now())
    RETURNING id, until
  )
  SELECT id::text AS id, until, pg_notify('${SHAPING_CHANNEL}', '')::text AS notified FROM fresh`,
);

// The existing tenant pause (the one sending-risk.ts sets and POST /tenants/{id}/resume-sending lifts),
// once: a tenant already paused keeps its first reason.
const RECORD_TENANT_PAUSE = declare(
  'mta_reaction_pause_tenant',
  `
  WITH paused AS (
    UPDATE tenants SET sending_paused_at = now(), sending_paused_reason = $3::text, updated_at = now()
     WHERE id = $4::uuid AND sending_paused_at IS NULL
    RETURNING id
  ), recorded AS (
    INSERT INTO mta_provider_suspensions (provider_key, domain, kind, reason, rule_id, tenant_id, email_id)
    SELECT $1::text, $2::text, 'pause_tenant', $3::text, $5::uuid, id, $6::uuid FROM paused
    RETURNING id
  )
  SELECT id::text AS id, NULL::timestamptz AS until, pg_notify('${SHAPING_CHANNEL}', '')::text AS notified FROM recorded`,
);

const RULE_COLUMNS = `id::text AS id, priority, provider_key, reply_code, enhanced_code, text_pattern, action, scope, minutes, factor, description, enabled`;

// Every rule, disabled ones too: what platform admins list and edit.
const ALL_RULES = declare(
  'mta_reaction_rules_all',
  `SELECT ${RULE_COLUMNS} FROM mta_reaction_rules ORDER BY priority, created_at`,
);

// $1 id (null: a new rule), then the rule's fields in RuleFields order. Each change wakes the loops.
const SAVE_RULE = declare(
  'mta_reaction_rule_save',
  `
  WITH saved AS (
    INSERT INTO mta_reaction_rules AS r
           (id, priority, provider_key, reply_code, enhanced_code, text_pattern, action, scope, minutes, factor, description, enabled)
    VALUES (COALESCE($1::uuid, gen_random_uuid()), $2::int, $3::text, $4::int, $5::text, $6::text, $7::text, $8::text,
            $9::int, $10::real, $11::text, $12::boolean)
    ON CONFLICT (id) DO UPDATE SET priority = EXCLUDED.priority, provider_key = EXCLUDED.provider_key,
           reply_code = EXCLUDED.reply_code, enhanced_code = EXCLUDED.enhanced_code, text_pattern = EXCLUDED.text_pattern,
           action = EXCLUDED.action, scope = EXCLUDED.scope, minutes = EXCLUDED.minutes, factor = EXCLUDED.factor,
           description = EXCLUDED.description, enabled = EXCLUDED.enabled
    RETURNING id
  )
  SELECT id::text AS id, pg_notify('${SHAPING_CHANNEL}', '')::text AS notified FROM saved`,
);

const DELETE_RULE = declare(
  'mta_reaction_rule_delete',
  `
  WITH removed AS (DELETE FROM mta_reaction_rules WHERE id = $1::uuid RETURNING id)
  SELECT id::text AS id, pg_notify('${SHAPING_CHANNEL}', '')::text AS notified FROM removed`,
);

// Ends a suspension or slow-down now, and makes due at once the spool rows the loops gave back to its
// end (a row given back carries the end as its run_at, up to a few seconds early: the node applied its
// own copy before the batch recorded it). A provider-wide one covers the domains last seen at the
// provider (destination_providers). A tenant pause is lifted by resuming the tenant's sending instead.
const LIFT_SUSPENSION = declare(
  'mta_suspension_lift',
  `
  WITH lifted AS (
    UPDATE mta_provider_suspensions s SET until = now()
     WHERE s.id = $1::uuid AND s.kind IN ('suspend', 'slow') AND s.until > now()
    -- RETURNING shows the row as updated; the sub-select reads it as the statement began: the end it had.
    RETURNING s.provider_key, s.domain, s.kind, (SELECT until FROM mta_provider_suspensions WHERE id = $1::uuid) AS planned_end
  ), due AS (
    UPDATE mta_spool p SET run_at = now()
      FROM lifted l
     WHERE l.kind = 'suspend' AND p.state IN ('queued', 'deferred')
       AND p.run_at BETWEEN l.planned_end - interval '15 seconds' AND l.planned_end
       AND (p.domain = l.domain
            OR (l.domain IS NULL AND p.domain IN (SELECT domain FROM destination_providers WHERE provider = l.provider_key)))
    RETURNING p.id
  )
  SELECT (SELECT count(*) FROM lifted)::int AS lifted, (SELECT count(*) FROM due)::int AS due,
         pg_notify('${SHAPING_CHANNEL}', '')::text AS notified, pg_notify('${SPOOL_CHANNEL}', '')::text AS woken`,
);

interface RuleRow {
  id: string;
  priority: number;
  provider_key: string | null;
  reply_code: number | null;
  enhanced_code: string | null;
  text_pattern: string | null;
  action: ReactionAction;
  scope: 'provider' | 'destination';
  minutes: number | null;
  factor: number | null;
  description: string;
  enabled: boolean;
}

/** A reaction rule's fields, as an admin sets them. */
export type RuleFields = Omit<ReactionRule, 'id'> & { enabled: boolean };

/** Every rule, disabled ones too, in match order. */
export async function listReactionRules(sql: Sql): Promise<Array<ReactionRule & { enabled: boolean }>> {
  return (await sql.rows<RuleRow>(ALL_RULES, [])).map((row) => ({ ...ruleOf(row), enabled: row.enabled }));
}

/** Creates (id null) or replaces the rule `id`; answers its id. */
export async function saveReactionRule(sql: Sql, id: string | null, rule: RuleFields): Promise<string> {
  const [row] = await sql.rows<{ id: string }>(SAVE_RULE, [
    id,
    rule.priority,
    rule.providerKey,
    rule.replyCode,
    rule.enhancedCode,
    rule.textPattern,
    rule.action,
    rule.scope,
    rule.minutes,
    rule.factor,
    rule.description,
    rule.enabled,
  ]);
  return row.id;
}

/** Whether a rule was removed (what it did stays, with its rule unnamed). */
export async function deleteReactionRule(sql: Sql, id: string): Promise<boolean> {
  return (await sql.rows(DELETE_RULE, [id])).length > 0;
}

/** Ends a suspension or slow-down in force now; answers whether one was, and how many rows are due again. */
export async function liftSuspension(sql: Sql, id: string): Promise<{ lifted: boolean; due: number }> {
  const [row] = await sql.rows<{ lifted: number; due: number }>(LIFT_SUSPENSION, [id]);
  return { lifted: row.lifted > 0, due: row.due };
}

function ruleOf(row: RuleRow): ReactionRule {
  return {
    id: row.id,
    priority: row.priority,
    providerKey: row.provider_key,
    replyCode: row.reply_code,
    enhancedCode: row.enhanced_code,
    textPattern: row.text_pattern,
    action: row.action,
    scope: row.scope,
    minutes: row.minutes,
    factor: row.factor,
    description: row.description,
  };
}

export async function loadReactionRules(sql: Sql): Promise<ReactionRule[]> {
  return (await sql.rows<RuleRow>(LIST_RULES, [])).map(ruleOf);
}

export async function loadActiveSuspensions(sql: Sql): Promise<ActiveSuspension[]> {
  const rows = await sql.rows<{
    provider_key: string;
    domain: string | null;
    kind: 'suspend' | 'slow';
    factor: number | null;
    until: Date;
  }>(ACTIVE_SUSPENSIONS, []);
  return rows.map((row) => ({
    providerKey: row.provider_key,
    domain: row.domain,
    kind: row.kind,
    factor: row.factor,
    until: row.until,
  }));
}

/** Reactions in force (suspensions, slow-downs, tenant pauses they set), newest first: the queue view's lines. */
export async function listActiveReactions(sql: Sql): Promise<ActiveReaction[]> {
  const rows = await sql.rows<{
    id: string;
    provider_key: string;
    domain: string | null;
    kind: ReactionAction;
    factor: number | null;
    until: Date | null;
    reason: string;
    rule: string | null;
    tenant_id: string | null;
    created_at: Date;
  }>(ACTIVE_REACTIONS, []);
  return rows.map((row) => ({
    id: row.id,
    providerKey: row.provider_key,
    domain: row.domain,
    kind: row.kind,
    factor: row.factor,
    until: row.until,
    reason: row.reason,
    rule: row.rule,
    tenantId: row.tenant_id,
    createdAt: row.created_at,
  }));
}

/** What a matched reply does, recorded with the batch that carried the reply. */
export interface ReactionRecord {
  rule: ReactionRule;
  providerKey: string;
  /** The destination, when the rule's scope is one destination (or the action pauses a tenant). */
  domain: string | null;
  reply: string;
  tenantId: string | null;
  emailId: string | null;
}

/**
 * The statement that records a reaction, for the caller's transaction. It answers a row only when the
 * reaction is new (not already in force): that row is the one to announce (event, webhook).
 */
export function recordReactionStatement(reaction: ReactionRecord): { text: string; values: unknown[] } {
  const { rule } = reaction;
  if (rule.action === 'pause_tenant')
    return {
      text: RECORD_TENANT_PAUSE.text,
      values: [
        reaction.providerKey,
        reaction.domain,
        `${rule.description}: ${reaction.reply}`,
        reaction.tenantId,
        rule.id,
        reaction.emailId,
      ],
    };
  return {
    text: RECORD_SUSPENSION.text,
    values: [
      reaction.providerKey,
      rule.scope === 'destination' ? reaction.domain : null,
      rule.action,
      rule.factor,
      rule.minutes,
      reaction.reply,
      rule.id,
      reaction.tenantId,
      reaction.emailId,
    ],
  };
}
