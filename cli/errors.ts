// Failures the CLI reports as one sentence and an exit code a pipeline can branch on.
import type { ErrorBody as ApiErrorBody } from '../shared/schemas/common.ts';
export const EXIT = {
  /** The API refused the request (4xx other than 401), or a check the command runs failed. */
  refused: 1,
  /** Bad or missing flags (oclif's own parse errors use 2 as well). */
  usage: 2,
  /** Not signed in, session expired, or the API key was refused (401). */
  auth: 3,
  /** The daemon could not be reached. */
  unreachable: 4,
  /** The daemon failed or the endpoint is not available (5xx, including 501 and 503). */
  daemon: 5,
} as const;

export class CliFailure extends Error {
  constructor(
    message: string,
    public readonly exitCode: number,
    public readonly code = 'CLI_FAILURE',
    /** Per-field details of a usage error (`--json` prints them). */
    public readonly details: { field: string; message: string }[] = [],
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The daemon's one error envelope (CONTRACT.md). */
export type { ApiErrorBody };

/** The daemon answered with an error body; the message is the API's own sentence. */
export class ApiRequestError extends CliFailure {
  constructor(
    public readonly status: number,
    public readonly body: ApiErrorBody,
  ) {
    super(body.message, exitCodeForStatus(status), body.code);
  }
}

export function exitCodeForStatus(status: number): number {
  if (status === 401) return EXIT.auth;
  if (status >= 500) return EXIT.daemon;
  return EXIT.refused;
}

export class SessionExpiredError extends CliFailure {
  constructor() {
    super('Your session has expired: run `svc login`.', EXIT.auth, 'SESSION_EXPIRED');
  }
}

export class NotSignedInError extends CliFailure {
  constructor(profile: string) {
    super(
      `You are not signed in (profile "${profile}"): run \`svc login\`, or set SVC_API_KEY.`,
      EXIT.auth,
      'NOT_SIGNED_IN',
    );
  }
}

export class NoTenantError extends CliFailure {
  constructor() {
    super(
      'No tenant selected: run `svc tenants use`, pass SVC_TENANT_ID, or create one with `svc tenants create`.',
      EXIT.usage,
      'NO_TENANT',
    );
  }
}

export class DaemonUnreachableError extends CliFailure {
  constructor(baseUrl: string, cause: string) {
    super(
      `Cannot reach the daemon at ${baseUrl} (${cause}): start it with \`svc daemon start\` or set SVC_BASE_URL.`,
      EXIT.unreachable,
      'UNREACHABLE',
    );
  }
}

/** A value a prompt would ask for is missing and stdin is not a terminal. */
export class MissingInputError extends CliFailure {
  constructor(what: string) {
    super(`${what} (stdin is not a terminal, so svc will not prompt).`, EXIT.usage, 'MISSING_FLAG');
  }
}

/** The one error object `--json` prints, whatever failed (CONTRACT.md's envelope, plus the exit code). */
export interface ContractError {
  error: {
    code: string;
    message: string;
    details: { field: string; message: string }[];
    exitCode: number;
    status?: number;
  };
}

/** Credentials that must never reach the terminal, even inside an error message. */
const SECRET_PATTERNS = [
  /svc_(?:live|test)_[A-Za-z0-9_-]+/g,
  /eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+/g,
  /whsec_[A-Za-z0-9_-]+/g,
];

export function redactSecrets(text: string, secrets: (string | undefined)[] = []): string {
  let out = text;
  for (const secret of secrets) if (secret && secret.length >= 6) out = out.split(secret).join('[redacted]');
  for (const pattern of SECRET_PATTERNS) out = out.replace(pattern, '[redacted]');
  return out;
}

/** oclif's parse errors (unknown flag, missing flag or argument, extra argument, bad value). */
interface ParseErrorLike {
  message: string;
  oclif?: { exit?: number };
  parse?: unknown;
  flags?: string[];
  args?: (string | { name: string })[];
}

/** Turns any failure into the contract object, with oclif's internals and every secret left out. */
export function toContractError(error: unknown, secrets: (string | undefined)[] = []): ContractError {
  const clean = (text: string) => redactSecrets(text.replace(/\u001b\[[0-9;]*m/g, ''), secrets);
  if (error instanceof ApiRequestError) {
    return {
      error: {
        code: error.code,
        message: clean(error.message),
        details: (error.body.details ?? []).map((d) => ({ field: d.field, message: clean(d.message) })),
        exitCode: error.exitCode,
        status: error.status,
      },
    };
  }
  if (error instanceof CliFailure) {
    const details = error.details.map((d) => ({ field: d.field, message: clean(d.message) }));
    return { error: { code: error.code, message: clean(error.message), details, exitCode: error.exitCode } };
  }
  const failure = (error ?? {}) as ParseErrorLike;
  const raw = typeof failure.message === 'string' ? failure.message : String(error);
  const lines = raw
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !/^See more help with/.test(line) && line !== 'The following error occurred:');
  let message = clean(lines.join(' ').replace(/\s+/g, ' '));
  if (failure.parse !== undefined || failure.oclif?.exit === EXIT.usage) {
    const details = [
      ...(failure.flags ?? []).map((flag) => ({ field: flag, message: 'unknown flag' })),
      ...(failure.args ?? []).map((arg) =>
        typeof arg === 'string'
          ? { field: arg, message: 'unexpected argument' }
          : { field: arg.name, message: 'missing argument' },
      ),
      ...[...raw.matchAll(/Missing required flag (\S+)/g)].map((match) => ({
        field: `--${match[1]}`,
        message: 'missing required flag',
      })),
    ];
    if (lines[0]?.endsWith(':') && details.length) message = `${lines[0]} ${details.map((d) => d.field).join(', ')}`;
    return { error: { code: 'USAGE', message, details, exitCode: EXIT.usage } };
  }
  return { error: { code: 'CLI_FAILURE', message, details: [], exitCode: failure.oclif?.exit ?? EXIT.refused } };
}
