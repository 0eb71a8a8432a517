// Every environment variable the daemon reads, parsed and checked once at boot.
// Nothing else in the daemon reads process.env: it receives a Config.
import { availableParallelism, homedir, hostname } from 'node:os';
import { defaultEhloName } from './ehlo-name.ts';
import { join } from 'node:path';

export type Role = 'api' | 'worker' | 'smtp' | 'all';

export interface Config {
  port: number;
  host: string;
  publicUrl: string;
  dataDir: string;
  databaseUrl: string | null;
  redisUrl: string | null;
  smtpUrl: string | null;
  smtpMaxConnections: number;
  smtpMaxMessages: number;
  /** relay: SMTP_URL (or capture without it); direct: the outbound MTA delivers to the recipients' MX hosts (docs/mta.md). */
  delivery: 'relay' | 'direct';
  /** The name the MTA says in EHLO (default: an FQDN of PUBLIC_URL or of the host, else an address literal; ehlo-name.ts). */
  ehloName: string;
  /** Local address the MTA binds to; null = the system's choice. */
  outboundAddress: string | null;
  /** A deferred message bounces once its next try would pass this many hours after it was spooled. */
  deliveryExpiryHours: number;
  dnsServers: string[];
  /** The well-known mail domain `svc doctor` resolves (MX) and opens port 25 to, with DELIVERY=direct. */
  doctorProbeDomain: string;
  /** A DNSSEC-signed name whose answer must carry the AD flag when the resolver validates (DANE needs it). */
  doctorDnssecProbe: string;
  /** Well-known mail domains whose MX must resolve before the MTA believes an NXDOMAIN (mta/resolver-health.ts). */
  dnsCanaryNames: string[];
  /** A domain's NXDOMAIN bounces only when a look-up this long after the first says it again. */
  dnsNxdomainConfirmMs: number;
  jwtSecret: string | null;
  nodeEnv: 'development' | 'production' | 'test';
  rateLimitMax: number;
  rateLimitWindowMs: number;
  authRateLimitMax: number;
  authRateLimitWindowMs: number;
  trustProxy: boolean;
  webhooksAllowPrivate: boolean;
  webhookRetryBaseMs: number;
  /** Ceiling of one endpoint's adaptive concurrency, per webhook worker thread. */
  webhookMaxInFlightPerEndpoint: number;
  sendRetryBaseMs: number;
  /** How long `?sync=true` waits for the recipient's server's answer with DELIVERY=direct before answering QUEUED. */
  syncDirectWaitMs: number;
  stripeSecretKey: string | null;
  stripeWebhookSecret: string | null;
  stripeApiBase: string | null;
  inboundWebhookToken: string | null;
  /** SMTP port receiving mail for the service's own addresses (bounces, complaints, unsubscribes, DMARC reports); 0 = off. */
  smtpInboundPort: number;
  /** Address the inbound SMTP listener binds to. */
  smtpInboundHost: string;
  /** The platform inbound domain of the tenants' token addresses; null: `inbound.<mail domain>` (docs/inbound.md). */
  inboundDomain: string | null;
  /** The host a tenant's inbound domain must name in its MX; null: the mail domain (PUBLIC_URL's host). */
  inboundMxHost: string | null;
  /**
   * Threads parsing inbound mail and computing its verdicts (INBOUND_READER_THREADS, 1–16; default one
   * per core, at most 4): one thread capped the listener near 200 messages a second (docs/inbound.md).
   */
  inboundReaderThreads: number;
  role: Role;
  logLevel: string;
  queueStuckAfterMs: number;
  /**
   * How long a worker's claim on a job holds before another worker may take it over (JOB_LEASE_MS,
   * 3 s–1 h; extended every third of it while held): how long the work of a node killed mid-job waits.
   * Null: each queue's own (60 s; 20 s for direct delivery and campaigns, daemon/jobs/index.ts).
   */
  jobLeaseMs: number | null;
  /** PEM files of the API's certificate and key; both set = HTTPS (and HTTP/2) on PORT. */
  tlsCertFile: string | null;
  tlsKeyFile: string | null;
  /** shared: send-worker + one background thread (scheduler, webhooks, system mail, maintenance); separate: five threads. */
  workerThreads: 'shared' | 'separate';
  /**
   * Send-worker threads on this node (SEND_THREADS, default 1): more than one uses the other cores of a
   * worker node. SMTP_MAX_CONNECTIONS stays the node's: its pools are split between them.
   */
  sendThreads: number;
  /** First-boot sender of system mail until the platform setting defaultFromAddress is set. */
  systemMailFrom: string | null;
  /** Send by SMTP (docs/smtp.md): STARTTLS port, implicit-TLS port (null = off each), address, certificate pair. */
  smtpSubmissionPort: number | null;
  smtpSubmissionTlsPort: number | null;
  smtpSubmissionHost: string;
  smtpSubmissionTlsCertFile: string | null;
  smtpSubmissionTlsKeyFile: string | null;
  /** Open authenticated SMTP connections one API key may hold on this node. */
  smtpSubmissionMaxConnectionsPerKey: number;
  /** Bearer token /metrics requires (null: none; docs/metrics.md). */
  metricsToken: string | null;
  /** A listener of its own for /metrics (null: /metrics is on the API's port); its address. */
  metricsPort: number | null;
  metricsHost: string;
}

export class ConfigError extends Error {
  constructor(
    public readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function text(env: Env, name: string): string | null {
  const value = env[name];
  return value === undefined || value.trim() === '' ? null : value.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === null) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `expected a whole number, got "${raw}".`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}.`);
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = text(env, name);
  if (raw === null) return fallback;
  if (/^(true|1|yes|on)$/i.test(raw)) return true;
  if (/^(false|0|no|off)$/i.test(raw)) return false;
  throw new ConfigError(name, `expected true or false, got "${raw}".`);
}

function url(env: Env, name: string, protocols: string[]): string | null {
  const raw = text(env, name);
  if (raw === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `is not a valid URL.`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must start with ${protocols.map((p) => p + '//').join(' or ')}.`);
  }
  return raw;
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = text(env, name);
  if (raw === null) return fallback;
  if (!(values as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${values.join(', ')}, got "${raw}".`);
  }
  return raw as T;
}

/** `a@b` or `Name <a@b>`: one mailbox, checked loosely (the send path validates it fully). */
function mailbox(env: Env, name: string): string | null {
  const raw = text(env, name);
  if (raw === null) return null;
  if (/[\r\n]/.test(raw) || !/^(?:[^<>@]*<[^<>@\s]+@[^<>@\s]+\.?[^<>@\s]*>|[^<>@\s]+@[^<>@\s]+)$/.test(raw)) {
    throw new ConfigError(
      name,
      `expected an address like no-reply@mail.example.com or "Name <no-reply@mail.example.com>", got "${raw}".`,
    );
  }
  return raw;
}

function dnsServers(env: Env): string[] {
  const raw = text(env, 'DNS_SERVERS');
  if (raw === null) return [];
  return raw.split(',').map((entry) => {
    const server = entry.trim();
    // node:dns accepts "ip", "ip:port" and "[v6]:port".
    if (!/^(\d{1,3}(\.\d{1,3}){3}(:\d{1,5})?|\[[0-9a-fA-F:]+\](:\d{1,5})?|[0-9a-fA-F:]+)$/.test(server)) {
      throw new ConfigError('DNS_SERVERS', `"${server}" is not an ip or ip:port.`);
    }
    return server;
  });
}

/** DNS_CANARY_NAMES: domain names, at least one (none would leave every NXDOMAIN unchecked). */
function dnsCanaryNames(env: Env): string[] {
  const raw = text(env, 'DNS_CANARY_NAMES');
  if (raw === null) return ['gmail.com', 'outlook.com', 'yahoo.com'];
  const names = raw
    .split(',')
    .map((name) => name.trim().toLowerCase().replace(/\.$/, ''))
    .filter((name) => name !== '');
  const bad = names.find((name) => !/^[a-z0-9_-]+(\.[a-z0-9_-]+)+$/.test(name));
  if (names.length === 0 || bad !== undefined)
    throw new ConfigError(
      'DNS_CANARY_NAMES',
      bad ? `"${bad}" is not a domain name.` : 'name at least one domain with MX records (e.g. gmail.com).',
    );
  return names;
}

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = oneOf(env, 'NODE_ENV', ['development', 'production', 'test'] as const, 'development');
  const production = nodeEnv === 'production';
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const host = text(env, 'HOST') ?? '127.0.0.1';
  const tlsCertFile = text(env, 'TLS_CERT');
  const tlsKeyFile = text(env, 'TLS_KEY');
  if ((tlsCertFile === null) !== (tlsKeyFile === null)) {
    throw new ConfigError(
      tlsCertFile === null ? 'TLS_CERT' : 'TLS_KEY',
      'TLS_CERT and TLS_KEY go together: set both (PEM files) to serve HTTPS, or neither.',
    );
  }
  const smtpTlsCertFile = text(env, 'SMTP_SUBMISSION_TLS_CERT');
  const smtpTlsKeyFile = text(env, 'SMTP_SUBMISSION_TLS_KEY');
  if ((smtpTlsCertFile === null) !== (smtpTlsKeyFile === null)) {
    throw new ConfigError(
      smtpTlsCertFile === null ? 'SMTP_SUBMISSION_TLS_CERT' : 'SMTP_SUBMISSION_TLS_KEY',
      'SMTP_SUBMISSION_TLS_CERT and SMTP_SUBMISSION_TLS_KEY go together: set both (PEM files), or neither for a self-signed pair.',
    );
  }
  const scheme = tlsCertFile ? 'https' : 'http';
  const publicUrl = (url(env, 'PUBLIC_URL', ['http:', 'https:']) ?? `${scheme}://${host}:${port}`).replace(/\/+$/, '');
  const jwtSecret = text(env, 'JWT_SECRET');
  if (jwtSecret !== null && jwtSecret.length < 32) {
    throw new ConfigError('JWT_SECRET', 'must be at least 32 characters long.');
  }
  const role = oneOf(env, 'ROLE', ['api', 'worker', 'smtp', 'all'] as const, 'all');
  return {
    port,
    host,
    publicUrl,
    dataDir: text(env, 'DATA_DIR') ?? join(homedir(), '.local', 'share', 'svc'),
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    smtpMaxConnections: integer(env, 'SMTP_MAX_CONNECTIONS', 5, 1, 100),
    smtpMaxMessages: integer(env, 'SMTP_MAX_MESSAGES', 10000, 1, 10_000_000),
    delivery: oneOf(env, 'DELIVERY', ['relay', 'direct'] as const, 'relay'),
    ehloName:
      text(env, 'EHLO_NAME') ??
      defaultEhloName({ publicUrl, outboundAddress: text(env, 'OUTBOUND_ADDRESS'), hostname: hostname() }),
    outboundAddress: text(env, 'OUTBOUND_ADDRESS'),
    deliveryExpiryHours: integer(env, 'DELIVERY_EXPIRY_HOURS', 120, 1, 24 * 30),
    dnsServers: dnsServers(env),
    doctorProbeDomain: text(env, 'DOCTOR_PROBE_DOMAIN') ?? 'gmail.com',
    doctorDnssecProbe: text(env, 'DOCTOR_DNSSEC_PROBE') ?? 'ietf.org',
    dnsCanaryNames: dnsCanaryNames(env),
    dnsNxdomainConfirmMs: integer(env, 'DNS_NXDOMAIN_CONFIRM_MS', 10 * 60_000, 0, 86_400_000),
    jwtSecret,
    nodeEnv,
    rateLimitMax: integer(env, 'RATE_LIMIT_MAX', production ? 300 : 1000, 1, 10_000_000),
    rateLimitWindowMs: integer(env, 'RATE_LIMIT_WINDOW_MS', 60_000, 1000, 86_400_000),
    authRateLimitMax: integer(env, 'AUTH_RATE_LIMIT_MAX', 15, 1, 10_000_000),
    authRateLimitWindowMs: integer(env, 'AUTH_RATE_LIMIT_WINDOW_MS', 15 * 60_000, 1000, 86_400_000),
    trustProxy: boolean(env, 'TRUST_PROXY', false),
    webhooksAllowPrivate: boolean(env, 'WEBHOOKS_ALLOW_PRIVATE', !production),
    webhookRetryBaseMs: integer(env, 'WEBHOOK_RETRY_BASE_MS', 10_000, 1, 3_600_000),
    webhookMaxInFlightPerEndpoint: integer(env, 'WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT', 64, 1, 1_000),
    sendRetryBaseMs: integer(env, 'SEND_RETRY_BASE_MS', 30_000, 1, 3_600_000),
    syncDirectWaitMs: integer(env, 'SYNC_DIRECT_WAIT_MS', 10_000, 0, 120_000),
    stripeSecretKey: text(env, 'STRIPE_SECRET_KEY'),
    stripeWebhookSecret: text(env, 'STRIPE_WEBHOOK_SECRET'),
    stripeApiBase: url(env, 'STRIPE_API_BASE', ['http:', 'https:']),
    inboundWebhookToken: text(env, 'INBOUND_WEBHOOK_TOKEN'),
    smtpInboundPort: integer(env, 'SMTP_INBOUND_PORT', 0, 0, 65535),
    smtpInboundHost: text(env, 'SMTP_INBOUND_HOST') ?? host,
    inboundDomain: text(env, 'INBOUND_DOMAIN')?.toLowerCase().replace(/\.$/, '') ?? null,
    inboundMxHost: text(env, 'INBOUND_MX_HOST')?.toLowerCase().replace(/\.$/, '') ?? null,
    inboundReaderThreads: integer(env, 'INBOUND_READER_THREADS', Math.min(availableParallelism(), 4), 1, 16),
    role,
    logLevel: oneOf(
      env,
      'LOG_LEVEL',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const,
      production ? 'info' : 'info',
    ),
    queueStuckAfterMs: integer(env, 'QUEUE_STUCK_AFTER_MS', 5 * 60_000, 1000, 86_400_000),
    jobLeaseMs: text(env, 'JOB_LEASE_MS') === null ? null : integer(env, 'JOB_LEASE_MS', 0, 3_000, 3_600_000),
    tlsCertFile,
    tlsKeyFile,
    workerThreads: oneOf(env, 'WORKER_THREADS', ['shared', 'separate'] as const, 'shared'),
    sendThreads: integer(env, 'SEND_THREADS', 1, 1, 16),
    systemMailFrom: mailbox(env, 'SYSTEM_MAIL_FROM'),
    // 0 or unset: that listener is off.
    smtpSubmissionPort: integer(env, 'SMTP_SUBMISSION_PORT', 0, 0, 65535) || null,
    smtpSubmissionTlsPort: integer(env, 'SMTP_SUBMISSION_TLS_PORT', 0, 0, 65535) || null,
    smtpSubmissionHost: text(env, 'SMTP_SUBMISSION_HOST') ?? host,
    smtpSubmissionTlsCertFile: smtpTlsCertFile,
    smtpSubmissionTlsKeyFile: smtpTlsKeyFile,
    smtpSubmissionMaxConnectionsPerKey: integer(env, 'SMTP_SUBMISSION_MAX_CONNECTIONS_PER_KEY', 10, 1, 10_000),
    ...metricsSettings(env, port),
  };
}

/** METRICS_TOKEN, METRICS_PORT, METRICS_HOST (docs/metrics.md): refused where they would do nothing. */
function metricsSettings(env: Env, apiPort: number): Pick<Config, 'metricsToken' | 'metricsPort' | 'metricsHost'> {
  const metricsToken = text(env, 'METRICS_TOKEN');
  if (metricsToken !== null && metricsToken.length < 16)
    throw new ConfigError('METRICS_TOKEN', 'must be at least 16 characters long (a scraper reads it from a file).');
  const metricsPort = integer(env, 'METRICS_PORT', 0, 0, 65535) || null;
  const metricsHost = text(env, 'METRICS_HOST');
  if (metricsHost !== null && metricsPort === null)
    throw new ConfigError(
      'METRICS_HOST',
      'only applies with METRICS_PORT: set both to serve /metrics on its own listener.',
    );
  if (metricsPort !== null && metricsPort === apiPort)
    throw new ConfigError('METRICS_PORT', `must differ from PORT (${apiPort}): it is a listener of its own.`);
  return { metricsToken, metricsPort, metricsHost: metricsHost ?? '127.0.0.1' };
}
