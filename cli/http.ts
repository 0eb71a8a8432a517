// The one place the CLI talks HTTP: credentials, tenant header, transparent token refresh, error bodies.
import type { TokenPair } from '../shared/schemas/auth.ts';
import ky, { type KyResponse } from 'ky';
import type { CliEnvironment } from './environment.ts';
import { DEFAULT_BASE_URL } from './environment.ts';
import type { Profile, ProfileStore } from './profiles.ts';
import { checkTransport, describeCertificateProblem, fetchTrusting, insecureWarning } from './transport-security.ts';
import {
  ApiRequestError,
  CliFailure,
  EXIT,
  DaemonUnreachableError,
  NoTenantError,
  NotSignedInError,
  SessionExpiredError,
  type ApiErrorBody,
} from './errors.ts';

const REQUEST_TIMEOUT_MS = 30_000;
type Query = Record<string, string | number | boolean | string[] | undefined>;

export interface RequestOptions {
  json?: unknown;
  query?: Query;
  headers?: Record<string, string>;
  /** Send X-Tenant-Id (default true). With an API key the key names the tenant, so it may be absent. */
  tenant?: boolean;
  /** Send credentials (default true). */
  auth?: boolean;
  /** Keep the body unread and without timeout (server-sent events). */
  stream?: boolean;
  /** A streamed request body (a file upload); sent without timeout, and not re-sent after a 401. */
  body?: ReadableStream<Uint8Array>;
  signal?: AbortSignal;
  /** Statuses that are answers rather than failures (e.g. 503 from a readiness check). */
  accept?: number[];
}

export interface QuotaHeaders {
  limit: number;
  used: number;
  percentage: number;
  warning: boolean;
}

export class HttpSession {
  private refreshing: Promise<void> | null = null;
  private warnedInsecure = false;
  private trustedFetch: typeof fetch | undefined | null = null;
  /** A base URL given on the command line (login --base-url) before it is saved to the profile. */
  baseUrlOverride: string | undefined;
  /** Quota headers of the last tenant answer that carried them (the dashboard's quota bar). */
  lastQuota: QuotaHeaders | null = null;

  constructor(
    readonly profileName: string,
    private readonly store: ProfileStore,
    private readonly environment: CliEnvironment,
  ) {}

  get profile(): Profile {
    return this.store.get(this.profileName);
  }

  get baseUrl(): string {
    return (this.baseUrlOverride ?? this.environment.baseUrl ?? this.profile.baseUrl ?? DEFAULT_BASE_URL).replace(
      /\/+$/,
      '',
    );
  }

  /** The private CA this session trusts (--ca, SVC_CA_FILE, or the profile's). */
  get caFile(): string | undefined {
    return this.environment.transport.caFile;
  }

  get usesApiKey(): boolean {
    return this.environment.apiKey !== undefined;
  }

  /** SVC_TENANT_ID, else the profile's tenant; with SVC_API_KEY the key's own tenant (never the profile's). */
  get tenantId(): string | undefined {
    return this.environment.tenantId ?? (this.usesApiKey ? undefined : this.profile.tenantId);
  }

  /** The tenant's display name when it came from the profile (env overrides carry only an id). */
  get tenantName(): string | undefined {
    return this.environment.tenantId || this.usesApiKey ? undefined : this.profile.tenantName;
  }

  get signedIn(): boolean {
    return this.usesApiKey || this.profile.accessToken !== undefined;
  }

  saveProfile(changes: Partial<Profile>): Profile {
    return this.store.update(this.profileName, changes);
  }

  storeTokens(tokens: TokenPair, extra: Partial<Profile> = {}): void {
    this.saveProfile({ accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, ...extra });
  }

  forgetTokens(): void {
    this.saveProfile({ accessToken: undefined, refreshToken: undefined });
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const response = await this.send(method, path, options);
    return (await readBody(response)) as T;
  }

  /** Sends, refreshing the access token once on a 401, and throws the API's error as ApiRequestError. */
  async send(method: string, path: string, options: RequestOptions = {}, mayRefresh = true): Promise<KyResponse> {
    const headers: Record<string, string> = { ...options.headers };
    const accessToken = this.profile.accessToken;
    if (options.auth !== false) {
      const credential = this.environment.apiKey ?? accessToken;
      if (!credential) throw new NotSignedInError(this.profileName);
      headers.authorization = `Bearer ${credential}`;
    }
    if (options.tenant !== false) {
      const tenantId = this.tenantId;
      if (tenantId) headers['x-tenant-id'] = tenantId;
      else if (!this.usesApiKey) throw new NoTenantError();
    }
    const response = await this.fetch(method, path, options, headers);
    if (response.status === 401 && mayRefresh && options.auth !== false && !this.usesApiKey && !options.body) {
      await this.refreshAfter(accessToken);
      return this.send(method, path, options, false);
    }
    if (response.status === 401 && this.usesApiKey && options.auth !== false)
      throw apiKeyRefused(await toApiError(response));
    if (!response.ok && !options.accept?.includes(response.status)) throw await toApiError(response);
    this.rememberQuota(response);
    return response;
  }

  private async fetch(
    method: string,
    path: string,
    options: RequestOptions,
    headers: Record<string, string>,
  ): Promise<KyResponse> {
    const searchParams = new URLSearchParams();
    for (const [key, value] of Object.entries(options.query ?? {})) {
      for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value])
        searchParams.append(key, String(one));
    }
    // Decided before ky runs, so a refused request opens no connection at all.
    const carriesSecrets = headers.authorization !== undefined || options.json !== undefined;
    if (checkTransport(this.baseUrl, carriesSecrets, this.environment.transport) === 'warn' && !this.warnedInsecure) {
      this.warnedInsecure = true;
      process.stderr.write(insecureWarning(this.baseUrl) + '\n');
    }
    if (this.trustedFetch === null) this.trustedFetch = fetchTrusting(this.environment.transport.caFile);
    try {
      return await ky(`${this.baseUrl}${path}`, {
        ...(this.trustedFetch ? { fetch: this.trustedFetch } : {}),
        method,
        headers,
        searchParams,
        ...(options.json === undefined ? {} : { json: options.json }),
        // fetch needs duplex 'half' to send a stream; ky hands its options to the Request.
        ...(options.body === undefined ? {} : ({ body: options.body, duplex: 'half' } as object)),
        throwHttpErrors: false,
        retry: 0,
        timeout: options.stream || options.body ? false : REQUEST_TIMEOUT_MS,
        signal: options.signal,
      });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      const untrusted = describeCertificateProblem(causeCode(error), this.baseUrl);
      if (untrusted) throw new CliFailure(untrusted, EXIT.unreachable, 'UNTRUSTED_CERTIFICATE');
      throw new DaemonUnreachableError(this.baseUrl, describeNetworkError(error));
    }
  }

  /**
   * Refresh tokens rotate, so two refreshes with the same token would revoke the whole family:
   * requests that fail together share one refresh, and a request that failed with an access token
   * that has already been replaced just retries.
   */
  private async refreshAfter(staleAccessToken: string | undefined): Promise<void> {
    if (this.profile.accessToken !== staleAccessToken) return;
    this.refreshing ??= this.refreshTokens().finally(() => {
      this.refreshing = null;
    });
    await this.refreshing;
  }

  private async refreshTokens(): Promise<void> {
    const refreshToken = this.profile.refreshToken;
    if (!refreshToken) throw new SessionExpiredError();
    const response = await this.fetch('POST', '/auth/refresh', { json: { refreshToken } }, {});
    if (!response.ok) {
      if (response.status < 500) {
        this.forgetTokens();
        throw new SessionExpiredError();
      }
      throw await toApiError(response);
    }
    this.storeTokens((await response.json()) as TokenPair);
  }

  private rememberQuota(response: KyResponse): void {
    const limit = response.headers.get('x-quota-limit');
    if (limit === null) return;
    this.lastQuota = {
      limit: Number(limit),
      used: Number(response.headers.get('x-quota-used') ?? 0),
      percentage: Number(response.headers.get('x-quota-percentage') ?? 0),
      warning: response.headers.get('x-quota-warning') === 'true',
    };
  }
}

async function readBody(response: KyResponse): Promise<unknown> {
  const text = await response.text();
  if (text === '') return undefined;
  return (response.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text;
}

/** A 401 to SVC_API_KEY's key: say it is the key, and that it came from the environment. */
function apiKeyRefused(error: ApiRequestError): ApiRequestError {
  // The daemon's sentence when it speaks of the key (revoked, expired); a value that is no key at all
  // reads to it as an access token, which is not what the person set.
  const head = /key/i.test(error.body.message) ? error.body.message.replace(/\.$/, '') : 'The API key is invalid';
  const message =
    `${head}: it comes from SVC_API_KEY in the environment. ` +
    'Set SVC_API_KEY to a live key of the tenant, or unset it to use your sign-in.';
  return new ApiRequestError(error.status, { ...error.body, message });
}

async function toApiError(response: KyResponse): Promise<ApiRequestError> {
  const text = await response.text().catch(() => '');
  let body: Partial<ApiErrorBody> = {};
  try {
    body = JSON.parse(text) as Partial<ApiErrorBody>;
  } catch {
    // Not the API's envelope (a proxy's page, say): keep the status line as the message.
  }
  return new ApiRequestError(response.status, {
    statusCode: response.status,
    error: body.error ?? response.statusText,
    code: body.code ?? `HTTP_${response.status}`,
    message: body.message ?? `The daemon answered ${response.status} ${response.statusText}.`,
    details: body.details,
  });
}

function causeCode(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: string; cause?: { code?: string } } } | null)?.cause;
  return cause?.code ?? cause?.cause?.code;
}

function describeNetworkError(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    if (error.name === 'TimeoutError') return `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`;
    return cause?.code ?? cause?.message ?? error.message;
  }
  return String(error);
}
