// `svc platform settings set key=value`: typed by the settings schema in shared/schemas/platform.ts, so a
// setting added there is settable here with no change (a boolean takes true/false, an integer a number,
// a nullable setting "null", a list or object JSON).
import type { TSchema } from '@sinclair/typebox';
import type { SvcClient } from '../client.ts';
import { CliFailure, EXIT } from '../errors.ts';
import { PlatformSettingsBody, type PlatformSettings } from '../../shared/schemas/platform.ts';

export function readSettings(client: SvcClient) {
  return client.http.request<PlatformSettings>('GET', '/platform/settings', { tenant: false });
}

export function changeSettings(client: SvcClient, changes: Record<string, unknown>) {
  return client.http.request<PlatformSettings>('PATCH', '/platform/settings', { json: changes, tenant: false });
}

/** `key=value` pairs → a PATCH body, each value typed by the schema of its key. */
export function settingsFromPairs(pairs: string[]): Record<string, unknown> {
  const properties = PlatformSettingsBody.properties as Record<string, TSchema>;
  const changes: Record<string, unknown> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    const key = at > 0 ? pair.slice(0, at) : pair;
    const schema = properties[key];
    if (at <= 0 || !schema)
      throw new CliFailure(
        `${at <= 0 ? `"${pair}" is not key=value` : `There is no setting "${key}"`}: settings are ${Object.keys(properties).join(', ')}.`,
        EXIT.usage,
        'BAD_FLAG',
      );
    changes[key] = typedValue(key, pair.slice(at + 1), acceptedTypes(schema));
  }
  return changes;
}

function acceptedTypes(schema: TSchema): Set<string> {
  const branches = (schema.anyOf ?? schema.oneOf ?? [schema]) as TSchema[];
  const types = new Set<string>();
  for (const branch of branches) {
    if (branch.anyOf || branch.oneOf) for (const type of acceptedTypes(branch)) types.add(type);
    else if (typeof branch.type === 'string') types.add(branch.type);
    // Nullable() in shared/schemas/common.ts writes { type: [T, 'null'] }.
    else if (Array.isArray(branch.type)) for (const type of branch.type as string[]) types.add(type);
    else if (branch.const !== undefined) types.add(typeof branch.const);
  }
  return types;
}

function typedValue(key: string, raw: string, types: Set<string>): unknown {
  if (raw === 'null' && types.has('null')) return null;
  if (types.has('boolean') && (raw === 'true' || raw === 'false')) return raw === 'true';
  if ((types.has('integer') || types.has('number')) && raw.trim() !== '' && !Number.isNaN(Number(raw)))
    return Number(raw);
  if (types.has('array') || types.has('object')) {
    try {
      return JSON.parse(raw);
    } catch {
      throw new CliFailure(`${key} takes JSON (${[...types].join(' or ')}).`, EXIT.usage, 'BAD_FLAG');
    }
  }
  if (types.has('string')) return raw;
  // Let the daemon say what is wrong with it: its answer names the field and the rule.
  return raw;
}
