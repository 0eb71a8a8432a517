// Bulk rows are checked one at a time against the same schema as PUT /contacts, so that one bad row
// becomes one row error instead of a 400 for the whole request. Same validator family as Fastify's.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import formatsModule from 'ajv-formats';
import { UpsertContactBody } from '../../../shared/schemas/contacts.ts';

// ajv-formats is CommonJS: under NodeNext its types expose the plugin as `.default`, at run time it may be the module itself.
const addFormats = ((formatsModule as unknown as { default?: typeof formatsModule.default }).default ??
  formatsModule) as typeof formatsModule.default;

// Module-level on purpose: the compiled form of one constant schema, the same for every app and thread.
let compiled: ValidateFunction<UpsertContactBody> | null = null;

function validator(): ValidateFunction<UpsertContactBody> {
  if (!compiled) {
    const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false });
    addFormats(ajv);
    compiled = ajv.compile<UpsertContactBody>(UpsertContactBody);
  }
  return compiled;
}

function sentence(issue: ErrorObject): string {
  const path = issue.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const extra = issue.params as { missingProperty?: string; additionalProperty?: string };
  if (issue.keyword === 'required') return `${[path, extra.missingProperty].filter(Boolean).join('.')} is required`;
  if (issue.keyword === 'additionalProperties')
    return `${[path, extra.additionalProperty].filter(Boolean).join('.')} is not an accepted field`;
  return `${path || 'row'} ${issue.message ?? 'is invalid'}`;
}

export function checkUpsertRow(raw: unknown): { ok: true; value: UpsertContactBody } | { ok: false; error: string } {
  const check = validator();
  if (check(raw)) return { ok: true, value: raw };
  const issues = (check.errors ?? []).map(sentence);
  return { ok: false, error: `Invalid contact: ${issues.join('; ')}.` };
}
