// Failures the CLI reports as one sentence and an exit code a pipeline can branch on.
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
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export interface ApiErrorBody {
  statusCode: number;
  error: string;
  code: string;
  message: string;
  details?: { field: string; message: string }[];
}

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
    super(`You are not signed in (profile "${profile}"): run \`svc login\`, or set SVC_API_KEY.`, EXIT.auth, 'NOT_SIGNED_IN');
  }
}

export class NoTenantError extends CliFailure {
  constructor() {
    super('No tenant selected: run `svc tenants use`, pass SVC_TENANT_ID, or create one with `svc tenants create`.', EXIT.usage, 'NO_TENANT');
  }
}

export class DaemonUnreachableError extends CliFailure {
  constructor(baseUrl: string, cause: string) {
    super(`Cannot reach the daemon at ${baseUrl} (${cause}): start it with \`svc daemon start\` or set SVC_BASE_URL.`, EXIT.unreachable, 'UNREACHABLE');
  }
}

/** A value a prompt would ask for is missing and stdin is not a terminal. */
export class MissingInputError extends CliFailure {
  constructor(what: string) {
    super(`${what} (stdin is not a terminal, so svc will not prompt).`, EXIT.usage, 'MISSING_FLAG');
  }
}
