import { Flags } from '@oclif/core';
import { SvcCommand } from '../../../base-command.ts';
import { CliFailure, EXIT } from '../../../errors.ts';
import { describeRecord } from '../../../records.ts';
import { createReactionRule, ruleFieldsOfFlags } from '../../../services/shaping.ts';
import type { CreateReactionRuleBody, ReactionRuleBody } from '../../../../shared/schemas/shaping.ts';

/** Flags of a rule's fields, shared with `svc providers rules set`. */
export const ruleFlags = {
  priority: Flags.integer({ description: 'lower matches first (the shipped rules use 10–90)', min: 0, max: 10_000 }),
  provider: Flags.string({
    description: 'the provider whose replies it matches (see `svc providers`), or "none" for any',
  }),
  code: Flags.string({ description: 'reply code to match (421, 451, 550 …), or "none"' }),
  'enhanced-code': Flags.string({ description: 'RFC 3463 enhanced code to match (4.7.28 …), or "none"' }),
  text: Flags.string({ description: 'case-insensitive regular expression over the reply, or "none"' }),
  action: Flags.string({ description: 'what a match does', options: ['suspend', 'slow', 'pause_tenant'] }),
  scope: Flags.string({
    description: 'the whole provider, or only the destination domain',
    options: ['provider', 'destination'],
  }),
  minutes: Flags.string({ description: 'how long a suspension or slow-down lasts, or "none" (pause_tenant)' }),
  factor: Flags.string({ description: 'a slow-down multiplies connections and rate by this (0.01–0.99), or "none"' }),
  description: Flags.string({ description: 'why the rule exists (shown with what it drew)' }),
};

export default class ProvidersRulesAdd extends SvcCommand<typeof ProvidersRulesAdd> {
  static override operations = ['postPlatformReactionRules'];
  static override summary =
    "Add a reaction rule on providers' replies: suspend, slow down or pause the tenant (platform admins).";
  static override description =
    'A rule matches a deferral or refusal by provider, reply code, enhanced code and text (every one given must ' +
    'match; the first rule by priority wins). Every MTA loop reloads at once.';
  static override examples = [
    '<%= config.bin %> providers rules add --provider google --enhanced-code 4.7.28 --action suspend --minutes 15 --description "Gmail rate limit"',
    '<%= config.bin %> providers rules add --provider yahoo --text "\\bTS03\\b" --action slow --factor 0.5 --minutes 60 --description "Yahoo TS03"',
  ];
  static override showHeader = false;
  static override flags = {
    ...ruleFlags,
    action: Flags.string({
      description: 'what a match does',
      options: ['suspend', 'slow', 'pause_tenant'],
      required: true,
    }),
    description: Flags.string({ description: 'why the rule exists (shown with what it drew)', required: true }),
    disabled: Flags.boolean({ description: 'add it disabled (it matches nothing until enabled)' }),
  };

  async run(): Promise<ReactionRuleBody> {
    const fields = ruleFieldsOfFlags(this.flags);
    if (fields.action === undefined || fields.description === undefined)
      throw new CliFailure('Pass --action and --description.', EXIT.usage, 'MISSING_FLAG');
    const rule = await createReactionRule(this.client, {
      ...fields,
      action: fields.action,
      description: fields.description,
      ...(this.flags.disabled ? { enabled: false } : {}),
    } as CreateReactionRuleBody);
    this.log(describeRecord(rule));
    return rule;
  }
}
