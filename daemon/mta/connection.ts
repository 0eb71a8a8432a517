// One SMTP session with a recipient's MX host, on nodemailer's smtp-connection (ZoneMTA's client too):
// bound to the configured source address, saying our EHLO name, STARTTLS whenever offered (or required
// and checked, as the TLS policy demands), PIPELINING when the peer offers it, and one transaction per
// message with all its recipients, answering a verdict per recipient.
import type { TLSSocket, ConnectionOptions } from 'node:tls';
import SMTPConnection from 'nodemailer/lib/smtp-connection';
import type { Transform } from 'node:stream';
import { escapeDataChunk } from './data-stream.ts';
import { classifyReply, deferredByError, type RecipientVerdict } from './outcome.ts';
import { isBindFailure } from './bindable-address.ts';

/** What TLS a session must have; built by tls-policy.ts for each MX host. */
export interface TlsDemand {
  /** `opportunistic`: STARTTLS when offered, unchecked; `required`: no TLS, no delivery. */
  mode: 'opportunistic' | 'required';
  /** Options for the TLS handshake (servername, CA, rejectUnauthorized). */
  tls: ConnectionOptions;
  /** A check of the peer once TLS is up (DANE's TLSA match); answers a failure or null. */
  verifyPeer?: (socket: TLSSocket) => string | null;
  /** MTA-STS `testing`: a failed check (or no STARTTLS) is reported for TLS-RPT, and delivery goes on. */
  reportOnly?: boolean;
}

export interface SessionOptions {
  ehloName: string;
  /** The local address to bind (OUTBOUND_ADDRESS); unset = the system's choice. */
  localAddress?: string;
  port?: number;
  connectTimeoutMs?: number;
  greetingTimeoutMs?: number;
  /** Inactivity allowed while waiting for a reply (RFC 5321 §4.5.3.2 wants minutes for DATA). */
  socketTimeoutMs?: number;
}

export interface RecipientResult {
  address: string;
  verdict: RecipientVerdict;
}

export interface Envelope {
  /** The return path; empty for the null sender. */
  from: string;
  to: string[];
}

/** Why a session could not be opened, in words for the last response, and whether TLS was the cause. */
export class SessionFailure extends Error {
  constructor(
    message: string,
    readonly tlsFailure: string | null = null,
    /** The source address could not be bound (EADDRNOTAVAIL): no MX host can be reached from it. */
    readonly bindFailure = false,
  ) {
    super(message);
  }
}

function describe(error: unknown): string {
  const { code, response, message } = error as { code?: string; response?: string; message?: string };
  if (response) return response.trim();
  return code ? `${code}: ${message ?? ''}`.trim() : String(message ?? error);
}

/** What makes two demands interchangeable for a session already open. */
export function demandKeyOf(demand: TlsDemand): string {
  return [
    demand.mode,
    demand.tls.servername ?? '',
    demand.verifyPeer ? 'verified' : '',
    demand.reportOnly ? 'report' : '',
  ].join('|');
}

/** How long a QUIT may take to close its socket before it is destroyed. */
const QUIT_CLOSE_MS = 5_000;

export class SmtpSession {
  messagesSent = 0;
  /** An RFC 8460 result type this session's TLS failed with while delivery went on (`reportOnly`). */
  tlsProblem: string | null = null;
  /** Set once the session may not carry another message (an error, a reset, a timeout). */
  broken = false;
  private pending: ((error: unknown) => void) | null = null;
  private closeListeners: (() => void)[] = [];
  /** After QUIT: the pool's place is given back when the socket has closed, not at nodemailer's 'end'. */
  private quitting = false;

  private constructor(
    private readonly connection: SMTPConnection,
    /** The MX host name this session talks to. */
    readonly host: string,
    readonly address: string,
    /** The TLS demand it was opened under: an idle session serves only the same demand again. */
    readonly demandKey: string,
  ) {
    connection.on('error', (error: unknown) => this.fail(error));
    connection.on('end', () => this.fail(new Error('connection closed by the peer')));
    escapeDataNatively(connection);
  }

  get secure(): boolean {
    return this.connection.secure;
  }

  /** Connects, greets, upgrades as `demand` says and checks the peer; throws a SessionFailure. */
  static async open(host: string, address: string, demand: TlsDemand, options: SessionOptions): Promise<SmtpSession> {
    const connection = new SMTPConnection({
      host: address,
      port: options.port ?? 25,
      name: options.ehloName,
      localAddress: options.localAddress,
      servername: typeof demand.tls.servername === 'string' ? demand.tls.servername : host,
      requireTLS: demand.mode === 'required',
      opportunisticTLS: demand.mode === 'opportunistic',
      tls: demand.tls,
      connectionTimeout: options.connectTimeoutMs ?? 30_000,
      greetingTimeout: options.greetingTimeoutMs ?? 30_000,
      socketTimeout: options.socketTimeoutMs ?? 5 * 60_000,
      allowInternalNetworkInterfaces: true,
      logger: false,
    });
    const session = new SmtpSession(connection, host, address, demandKeyOf(demand));
    try {
      await new Promise<void>((resolve, reject) => {
        session.pending = reject;
        connection.connect((error) => (error ? reject(error) : resolve()));
      });
    } catch (error) {
      connection.close();
      const text = describe(error);
      // RFC 8460 §4.3 result types for what made a required TLS session fail: STARTTLS answered with
      // a refusal (or not offered: nodemailer sends it anyway under requireTLS), or a failed handshake.
      const { code, response } = error as { code?: string; response?: string };
      const tlsFailure =
        demand.mode !== 'required' || code !== 'ETLS'
          ? null
          : response
            ? 'starttls-not-supported'
            : 'validation-failure';
      throw new SessionFailure(`${host} [${address}]: ${text}`, tlsFailure, isBindFailure(error));
    } finally {
      session.pending = null;
    }
    if (!connection.secure) {
      if (demand.mode === 'required') {
        connection.close();
        throw new SessionFailure(`${host} [${address}]: TLS required, not offered`, 'starttls-not-supported');
      }
      if (demand.reportOnly) session.tlsProblem = 'starttls-not-supported';
      return session;
    }
    const peerProblem = demand.verifyPeer ? demand.verifyPeer(session.tlsSocket()) : null;
    if (peerProblem && demand.reportOnly) session.tlsProblem = peerProblem;
    else if (peerProblem) {
      connection.close();
      throw new SessionFailure(`${host} [${address}]: TLS ${peerProblem}`, peerProblem);
    }
    return session;
  }

  private tlsSocket(): TLSSocket {
    // nodemailer keeps the upgraded socket here; it has no public accessor.
    return (this.connection as unknown as { _socket: TLSSocket })._socket;
  }

  onClose(listener: () => void): void {
    this.closeListeners.push(listener);
  }

  private fail(error: unknown): void {
    this.broken = true;
    const pending = this.pending;
    this.pending = null;
    pending?.(error);
    if (!this.quitting) this.notifyClosed();
  }

  /** Tells the pool once that this session no longer counts toward its connections. */
  private notifyClosed(): void {
    const listeners = this.closeListeners;
    this.closeListeners = [];
    for (const listener of listeners) listener();
  }

  /**
   * One transaction: MAIL, every RCPT, DATA (pipelined when offered). Recipients the server took share
   * the reply to DATA; refused ones keep the reply to their RCPT. A lost connection or a timeout before
   * the reply to DATA defers everyone not refused already.
   */
  send(envelope: Envelope, message: Buffer): Promise<RecipientResult[]> {
    return new Promise((resolve) => {
      let settled = false;
      const finish = (results: RecipientResult[]) => {
        if (settled) return;
        settled = true;
        this.pending = null;
        this.messagesSent++;
        resolve(results);
      };
      // A 421 closes the session (RFC 5321 §4.2: Gmail's 4.7.28 rate limit, Yahoo's TSS04): the peer's
      // close reaches us before nodemailer's callback, and the reply, not "connection closed", is the answer.
      this.pending = (error) => {
        const closing = this.closingReply();
        finish(
          envelope.to.map((address) => ({
            address,
            verdict: closing ? classifyReply(closing) : deferredByError(describe(error)),
          })),
        );
      };
      this.connection.send({ from: envelope.from, to: envelope.to }, message, (error, info) => {
        if (!error && info) {
          const refused = new Map((info.rejectedErrors ?? []).map((e) => [e.recipient, describe(e)]));
          finish(
            envelope.to.map((address) => ({
              address,
              verdict: classifyReply(refused.get(address) ?? info.response),
            })),
          );
          return;
        }
        const failure = error as { code?: string; response?: string; rejectedErrors?: { recipient?: string }[] };
        // After a refused envelope or message the session could be reset and reused; a new session is
        // simpler to trust, and refusals are rare enough not to matter to the throughput.
        const refused = new Map((failure.rejectedErrors ?? []).map((e) => [e.recipient, describe(e)]));
        finish(
          envelope.to.map((address) => {
            const reply = refused.get(address) ?? failure.response;
            return { address, verdict: reply ? classifyReply(reply) : deferredByError(describe(error)) };
          }),
        );
        // Closing emits 'end' at once: the verdicts above are already settled by then.
        this.broken = true;
        this.connection.close();
        this.notifyClosed();
      });
    });
  }

  /** The 421 the peer sent as it closed the session, if that is how it ended. */
  private closingReply(): string | null {
    const last = (this.connection as unknown as { lastServerResponse?: string | false }).lastServerResponse;
    return typeof last === 'string' && /^421[ -]/.test(last.trim()) ? last.trim() : null;
  }

  /**
   * QUIT when the session is healthy, else just close. After a QUIT the session still counts toward the
   * pool's connections until its socket has closed: the MX host counts it until then, and a session the
   * pool opened meanwhile was one over the provider's limit there (two nodes at 5 were seen at 6).
   */
  close(): void {
    const wasBroken = this.broken;
    this.broken = true;
    const socket = this.tlsSocket() as TLSSocket | undefined;
    if (wasBroken || !socket || socket.destroyed) {
      if (wasBroken) this.connection.close();
      else this.connection.quit();
      this.notifyClosed();
      return;
    }
    this.quitting = true;
    // A peer that never answers QUIT nor closes does not keep the place for long.
    const timer = setTimeout(() => socket.destroy(), QUIT_CLOSE_MS);
    timer.unref();
    socket.once('close', () => {
      clearTimeout(timer);
      this.notifyClosed();
    });
    this.connection.quit();
  }
}

/**
 * Each message's DataStream (nodemailer makes one per DATA in `_createSendStream`) escapes with
 * data-stream.ts's indexOf-based copy of its `_transform`, byte for byte the same output (tested).
 */
function escapeDataNatively(connection: SMTPConnection): void {
  const internals = connection as unknown as { _createSendStream(callback: unknown): Transform };
  const create = internals._createSendStream;
  // A nodemailer that no longer has the method fails here, at the first session, not mid-delivery.
  if (typeof create !== 'function') throw new Error('nodemailer SMTPConnection has no _createSendStream');
  internals._createSendStream = function (this: unknown, callback: unknown) {
    const stream = create.call(this, callback);
    (stream as unknown as { _transform: typeof escapeDataChunk })._transform = escapeDataChunk;
    return stream;
  };
}
