// The CLI's settings from the environment, read once. CI pipelines set these instead of signing in.
import chalk from 'chalk';
import type { TransportSettings } from './transport-security.ts';

export interface CliEnvironment {
  /** SVC_BASE_URL: the daemon to talk to; wins over the profile's URL. */
  baseUrl?: string;
  /** SVC_API_KEY: a tenant API key; with it no login is needed and no token is refreshed. */
  apiKey?: string;
  /** SVC_TENANT_ID: the tenant to act in; wins over the profile's current tenant. */
  tenantId?: string;
  /** SVC_PROFILE: the stored profile to use when --profile is not given. */
  profile?: string;
  noColor: boolean;
  /** SVC_INSECURE=1 / --insecure and SVC_CA_FILE / --ca (cli/transport-security.ts). */
  transport: TransportSettings;
}

const nonEmpty = (value: string | undefined) => (value && value.trim() !== '' ? value.trim() : undefined);

export function readCliEnvironment(env: NodeJS.ProcessEnv = process.env): CliEnvironment {
  return {
    baseUrl: nonEmpty(env.SVC_BASE_URL),
    apiKey: nonEmpty(env.SVC_API_KEY),
    tenantId: nonEmpty(env.SVC_TENANT_ID),
    profile: nonEmpty(env.SVC_PROFILE),
    noColor: env.NO_COLOR !== undefined && env.NO_COLOR !== '',
    transport: { insecure: /^(1|true|yes)$/i.test(env.SVC_INSECURE ?? ''), caFile: nonEmpty(env.SVC_CA_FILE) },
  };
}

/** chalk 5 ignores NO_COLOR (https://no-color.org), so honour it here; Ink shares this chalk. */
export function applyColourPreference(environment: CliEnvironment): void {
  if (environment.noColor) chalk.level = 0;
}

export const DEFAULT_BASE_URL = 'http://127.0.0.1:3000';
