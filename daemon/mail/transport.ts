// Where composed messages go. Two kinds of transport, one call (`MailTransports.deliver`):
//  - relay: a pooled nodemailer SMTP transport per relay (SMTP_URL or a project's own settings),
//    kept open across sends; maxMessages is raised from nodemailer's 100 (SMTP_MAX_MESSAGES) so the
//    pool does not reconnect every hundred messages;
//  - capture: the same nodemailer pipeline (headers, MIME, DKIM) into a buffer, stored whole in
//    captured_messages. Used when no relay is configured and for test keys: nothing leaves the machine.
// And direct delivery (DELIVERY=direct): the message built and signed the same way is handed to the
// outbound MTA's spool through a port given at wiring (SpoolPort, mta/spooler.ts): mail/ imports no MTA.
import { errorText } from '../errors.ts';
import { createHash } from 'node:crypto';
import { domainToASCII } from 'node:url';
import nodemailer, { type Transporter } from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool';
import type { Config } from '../config.ts';
import { declare, type Sql } from '../db/sql.ts';
import { HARD_BOUNCE_CODES } from './addresses.ts';
import { relayTlsProblem, type RelayTlsProblem } from './relay-tls.ts';
import { hashRelaxedBodyNatively } from './dkim-body-hash.ts';
import { rememberHeaderKeys } from './header-keys.ts';
import { withEncodedTextParts } from './encoded-parts.ts';
import { withCrlfLineEnds } from './line-ends.ts';
import { bufferTransport, type BuiltMessage } from './buffer-transport.ts';
import { sendPrebuilt, type SmtpRecipientError } from './prebuilt-send.ts';
import type { MailStream } from '../../shared/schemas/ip-pools.ts';
import { createRandomPool, type RandomBytes } from './random-pool.ts';
import type { SpooledLog } from './spooled-log.ts';

export type { BuiltMessage };

export interface SmtpSettings {
  host: string;
  port: number;
  secure: boolean;
  user?: string | null;
  pass?: string | null;
}

/** `direct`: spooled for the outbound MTA (daemon/mta/), which delivers to the recipients' MX hosts. */
export type RelayTarget = { kind: 'capture' } | { kind: 'direct' } | { kind: 'smtp'; settings: SmtpSettings };

export interface DeliveryResult {
  messageId: string;
  captured: boolean;
  capturedId: string | null;
  /** Spooled for direct delivery: the outcomes come later, per destination (the log stays QUEUED until the first). */
  spooled: boolean;
  accepted: string[];
  /** Recipients the relay refused while others were accepted, with the server's answer. */
  rejected: { address: string; responseCode: number | null; response: string }[];
  response: string;
}

/** Where the message belongs in the database when it is captured. */
export interface CaptureOwner {
  sql: Sql;
  tenantId: string | null;
  emailId: string | null;
  /** For the spool: the log's project and stream, by which the MTA picks the IP pool (docs/mta.md). */
  projectId?: string | null;
  stream?: MailStream;
  /** For the spool: what the log records as the message is spooled (mail/spooled-log.ts). */
  log?: SpooledLog;
}

/** A message built and signed for direct delivery, as the outbound MTA's spool takes it. */
export interface SpoolRequest {
  owner: CaptureOwner;
  envelopeFrom: string;
  /** The envelope's recipients (To, Cc and Bcc). */
  recipients: string[];
  message: Buffer;
}

/**
 * The outbound MTA's spool (mta/spooler.ts), given to MailTransports at wiring (modules/mail-resources.ts):
 * mail/ hands a signed message over and knows nothing of the MTA. Answers the rows added (fewer than the
 * destinations when a send run again after a crash had spooled them already).
 */
export interface SpoolPort {
  spool(request: SpoolRequest): Promise<{ added: number; destinations: number }>;
  close(): void;
}

const INSERT_CAPTURED = declare(
  'capture_message',
  `
  INSERT INTO captured_messages (tenant_id, email_id, message_id, envelope_from, envelope_to, subject, raw)
  VALUES ($1, $2, $3, $4, $5::text[], $6, $7) RETURNING id::text AS id`,
);

const CONNECTION_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 60_000;

/** smtp://user:pass@host:port (or smtps://) as settings. */
export function smtpSettingsFromUrl(url: string): SmtpSettings {
  const parsed = new URL(url);
  const secure = parsed.protocol === 'smtps:';
  return {
    host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: parsed.port ? Number(parsed.port) : secure ? 465 : 587,
    secure,
    user: parsed.username ? decodeURIComponent(parsed.username) : null,
    pass: parsed.password ? decodeURIComponent(parsed.password) : null,
  };
}

export type TransportConfig = Pick<Config, 'smtpUrl' | 'smtpMaxConnections' | 'smtpMaxMessages'> &
  Partial<Pick<Config, 'delivery' | 'deliveryExpiryHours'>>;

function poolOptions(settings: SmtpSettings, config: TransportConfig): SMTPPool.Options {
  return {
    pool: true,
    host: settings.host,
    port: settings.port,
    secure: settings.secure,
    auth: settings.user ? { user: settings.user, pass: settings.pass ?? '' } : undefined,
    maxConnections: config.smtpMaxConnections,
    maxMessages: config.smtpMaxMessages,
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    greetingTimeout: CONNECTION_TIMEOUT_MS,
    socketTimeout: SOCKET_TIMEOUT_MS,
  };
}

function relayKey(settings: SmtpSettings): string {
  return createHash('sha256')
    .update(JSON.stringify([settings.host, settings.port, settings.secure, settings.user, settings.pass]))
    .digest('hex');
}

/** The destination domain of an address, lower case, an IDN as its A-label (what MX look-ups ask). */
export function recipientDomain(address: string): string {
  const domain = address.slice(address.lastIndexOf('@') + 1).toLowerCase();
  return domainToASCII(domain) || domain;
}

/**
 * The relay pools and the capture transport of one app, SMTP edge or worker thread (mail/resources.ts
 * creates it); `close()` at its shutdown ends the pooled connections.
 */
export class MailTransports {
  // One pool per distinct relay. The key is a hash so that passwords are not kept as map keys.
  private readonly pools = new Map<string, Transporter>();
  // Every send asks for its relay: a transport is found by the settings object itself before its key
  // is hashed (the drain's project relays are cached objects too), and the default one is parsed once.
  private readonly bySettings = new WeakMap<SmtpSettings, { key: string; transport: Transporter }>();
  private defaultTarget: RelayTarget | null = null;
  /** Builds messages into buffers (buffer-transport.ts) for capture, the spool and the relays. */
  private messageBuilder: Transporter | null = null;
  /** Random bytes for what each message needs a few of: its MIME boundary here, its link tokens' IVs in compose. */
  readonly randomBytes: RandomBytes = createRandomPool();

  /** `spooler`: the outbound MTA's spool, for DELIVERY=direct (absent: a direct target is refused). */
  constructor(
    private readonly config: TransportConfig,
    private readonly spooler?: SpoolPort,
  ) {
    // nodemailer's DKIM signer, in this thread, hashes bodies at native speed (dkim-body-hash.ts) and its
    // MIME nodes remember normalised header names (header-keys.ts); each throws here, at startup, if
    // nodemailer's internals are not what it replaces.
    hashRelaxedBodyNatively();
    rememberHeaderKeys();
  }

  /** The default relay: direct delivery when DELIVERY=direct, else SMTP_URL when set, else capture. */
  defaultRelay(): RelayTarget {
    this.defaultTarget ??=
      this.config.delivery === 'direct'
        ? { kind: 'direct' }
        : this.config.smtpUrl
          ? { kind: 'smtp', settings: smtpSettingsFromUrl(this.config.smtpUrl) }
          : { kind: 'capture' };
    return this.defaultTarget;
  }

  /** The pooled transport of the relay `settings`, opened on first use. */
  relayTransport(settings: SmtpSettings): Transporter {
    const known = this.bySettings.get(settings);
    // close() empties the pool map: a transport it closed is not handed out again.
    if (known && this.pools.get(known.key) === known.transport) return known.transport;
    const key = relayKey(settings);
    let transport = this.pools.get(key);
    if (!transport) {
      transport = nodemailer.createTransport(poolOptions(settings, this.config));
      this.pools.set(key, transport);
    }
    this.bySettings.set(settings, { key, transport });
    return transport;
  }

  /**
   * The message exactly as a relay would receive it (MIME, DKIM; Bcc in the envelope only,
   * buffer-transport.ts), in a buffer: what capture stores, the
   * spool holds and a relay is handed. Its bodies go to nodemailer quoted-printable encoded already
   * where it would encode them so (encoded-parts.ts), and its line ends are made CRLF here
   * (line-ends.ts) rather than by nodemailer's `newline: 'windows'` stream: the same bytes, at native
   * speed.
   */
  async build(message: Mail.Options): Promise<BuiltMessage> {
    this.messageBuilder ??= nodemailer.createTransport(bufferTransport);
    // The root's boundary from the pool (mail-composer hands `baseBoundary` to the root node only).
    const options = { baseBoundary: this.randomBytes(8).toString('hex'), ...withEncodedTextParts(message) };
    const built = (await this.messageBuilder.sendMail(options)) as BuiltMessage;
    return { ...built, message: withCrlfLineEnds(built.message) };
  }

  /** Builds the message exactly as a relay would receive it (MIME, DKIM) and stores it. */
  async capture(message: Mail.Options, owner: CaptureOwner): Promise<DeliveryResult> {
    const info = await this.build(message);
    const rows = await owner.sql.rows<{ id: string }>(INSERT_CAPTURED, [
      owner.tenantId,
      owner.emailId,
      info.messageId,
      info.envelope.from || null,
      info.envelope.to.length ? info.envelope.to : [''],
      typeof message.subject === 'string' ? message.subject : null,
      info.message.toString('utf8'),
    ]);
    return {
      messageId: info.messageId,
      captured: true,
      capturedId: rows[0].id,
      spooled: false,
      accepted: info.envelope.to,
      rejected: [],
      response: 'captured',
    };
  }

  /**
   * Builds and signs the message once and hands it to the outbound MTA's spool (the port given at wiring),
   * which writes a row per recipient domain and wakes the MTA loop.
   */
  async spool(message: Mail.Options, owner: CaptureOwner): Promise<DeliveryResult> {
    if (!this.spooler) throw new Error('direct delivery needs the MTA spool, which these transports were not given');
    const info = await this.build(message);
    const { added, destinations } = await this.spooler.spool({
      owner,
      envelopeFrom: info.envelope.from || '',
      recipients: info.envelope.to,
      message: info.message,
    });
    return {
      messageId: info.messageId,
      captured: false,
      capturedId: null,
      spooled: true,
      accepted: info.envelope.to,
      rejected: [],
      response: `spooled for ${destinations} destination(s)${added < destinations ? ' (already spooled)' : ''}`,
    };
  }

  /** Hands the message to the relay (pooled), captures it or spools it. Throws what nodemailer throws on failure. */
  async deliver(target: RelayTarget, message: Mail.Options, owner: CaptureOwner): Promise<DeliveryResult> {
    if (target.kind === 'capture') return this.capture(message, owner);
    if (target.kind === 'direct') return this.spool(message, owner);
    // Built into one buffer first, then handed over whole: streamed from the MIME tree, each header
    // block, boundary and part became its own socket write (a dozen syscalls and TCP segments per
    // message, 27 % of the send thread's time in the drain's profile); a buffer goes out in one,
    // straight to the pool (prebuilt-send.ts), not through nodemailer a second time.
    const built = await this.build(message);
    const info = await sendPrebuilt(this.relayTransport(target.settings), built);
    return {
      messageId: built.messageId,
      captured: false,
      capturedId: null,
      spooled: false,
      accepted: info.accepted.map((a) => (typeof a === 'string' ? a : a.address)),
      rejected: (info.rejectedErrors ?? []).map((e) => ({
        address: e.recipient ?? '',
        responseCode: e.responseCode ?? null,
        response: e.response ?? String(e),
      })),
      response: info.response,
    };
  }

  /** Closes every pooled relay connection (the owner's shutdown). */
  close(): void {
    this.spooler?.close();
    for (const transport of this.pools.values()) transport.close();
    this.pools.clear();
  }
}

export interface ClassifiedFailure {
  /** transient: try again later (4xx, network). permanent: the server refused for good (5xx). */
  kind: 'transient' | 'permanent';
  responseCode: number | null;
  message: string;
  /** Recipients the server said do not exist (550/551/553 on RCPT): hard bounces. */
  hardBounces: string[];
}

/** Reads nodemailer's error into what the send worker decides on. */
export function classifyDeliveryError(error: unknown): ClassifiedFailure {
  const e = (error ?? {}) as {
    responseCode?: number;
    response?: string;
    message?: string;
    code?: string;
    command?: string;
    rejectedErrors?: SmtpRecipientError[];
  };
  const rejectedErrors = e.rejectedErrors ?? [];
  const codes = rejectedErrors.map((r) => r.responseCode).filter((c): c is number => typeof c === 'number');
  const responseCode =
    typeof e.responseCode === 'number' ? e.responseCode : codes.length ? codes[codes.length - 1] : null;
  const message = (e.response ?? e.message ?? String(error)).slice(0, 1000);
  // All recipients refused: permanent only when every refusal was permanent.
  const permanent = codes.length > 0 ? codes.every((c) => c >= 500) : responseCode !== null && responseCode >= 500;
  const hardBounces = rejectedErrors
    .filter((r) => r.recipient && r.responseCode && HARD_BOUNCE_CODES.has(r.responseCode))
    .map((r) => r.recipient!);
  return { kind: permanent ? 'permanent' : 'transient', responseCode, message, hardBounces };
}

/** A real SMTP handshake (connect, greeting, EHLO, TLS, AUTH) against the settings. */
export async function verifySmtp(
  settings: SmtpSettings,
): Promise<{ ok: boolean; error?: string; tls?: RelayTlsProblem | null }> {
  const transport = nodemailer.createTransport({
    host: settings.host,
    port: settings.port,
    secure: settings.secure,
    auth: settings.user ? { user: settings.user, pass: settings.pass ?? '' } : undefined,
    connectionTimeout: CONNECTION_TIMEOUT_MS,
    greetingTimeout: CONNECTION_TIMEOUT_MS,
    socketTimeout: CONNECTION_TIMEOUT_MS,
  });
  try {
    await transport.verify();
    return { ok: true };
  } catch (error) {
    return { ok: false, error: errorText(error), tls: relayTlsProblem(error) };
  } finally {
    transport.close();
  }
}
