// The one injector of each column of `npm run bench:mta`: whole messages over SMTP to Postfix, Haraka
// or svc's submission port (a nodemailer pool of INJECT_CONNECTIONS connections, each upgraded with
// STARTTLS, as an application's SMTP settings do; AUTH where the server asks for it: svc), or the
// message parts over the API to svc (POST /emails/batch, 100 recipients a request, INJECT_REQUESTS
// requests in flight). Each accepted message's accept time is kept by its Message-ID, for the
// accept → received latency.
import { performance } from 'node:perf_hooks';
import nodemailer from 'nodemailer';
import {
  MTA_BENCH_ENVELOPE_FROM,
  MTA_BENCH_FROM,
  MTA_BENCH_HTML,
  MTA_BENCH_SUBJECT,
  MTA_BENCH_TEXT,
  recipientOf,
  type PresignedMessage,
} from './mta-message.ts';

export const INJECT_CONNECTIONS = 10;
export const INJECT_REQUESTS = 4;
const BATCH_SIZE = 100;

export interface Injection {
  /** Epoch ms of the first submission and of the last acceptance. */
  startedAt: number;
  finishedAt: number;
  /** Message-ID → epoch ms it was accepted. */
  acceptedAt: Map<string, number>;
  failures: number;
  /** The first refusal's text, to say why submissions failed. */
  firstError?: string;
}

const now = () => performance.timeOrigin + performance.now();

export interface SmtpInjectOptions {
  /** AUTH PLAIN after STARTTLS (svc's submission port: an API key as the password). */
  auth?: { user: string; pass: string };
  /**
   * The Message-ID the receiver will see, from the 250 reply: svc's submission sets its own
   * (`queued as <id>` → `<id@domain>`); Postfix and Haraka keep the message's.
   */
  messageIdOf?: (response: string, message: PresignedMessage) => string;
}

export async function injectSmtp(
  port: number,
  messages: PresignedMessage[],
  options: SmtpInjectOptions = {},
): Promise<Injection> {
  const transport = nodemailer.createTransport({
    pool: true,
    host: '127.0.0.1',
    port,
    secure: false,
    requireTLS: true,
    // The bench's self-signed pair (bench/mta-tls.ts), the same for every column.
    tls: { rejectUnauthorized: false },
    ...(options.auth ? { auth: { ...options.auth, method: 'PLAIN' } } : {}),
    maxConnections: INJECT_CONNECTIONS,
    maxMessages: Infinity,
  });
  const acceptedAt = new Map<string, number>();
  let failures = 0;
  let firstError: string | undefined;
  const startedAt = now();
  let next = 0;
  // INJECT_CONNECTIONS senders, each sending its next message when the last one was accepted.
  const sender = async () => {
    while (next < messages.length) {
      const message = messages[next++];
      try {
        const info = await transport.sendMail({
          envelope: { from: MTA_BENCH_ENVELOPE_FROM, to: [message.to] },
          raw: message.raw,
        });
        acceptedAt.set(options.messageIdOf?.(info.response, message) ?? message.messageId, now());
      } catch (error) {
        failures++;
        firstError ??= (error as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: INJECT_CONNECTIONS }, sender));
  const finishedAt = now();
  transport.close();
  return { startedAt, finishedAt, acceptedAt, failures, firstError };
}

export async function injectApi(baseUrl: string, apiKey: string, run: string, count: number): Promise<Injection> {
  const acceptedAt = new Map<string, number>();
  let failures = 0;
  const startedAt = now();
  let next = 0;
  const requester = async () => {
    while (next < count) {
      const first = next;
      next = Math.min(count, next + BATCH_SIZE);
      const recipients = Array.from({ length: next - first }, (_, i) => ({ to: recipientOf(run, first + i) }));
      const response = await fetch(`${baseUrl}/emails/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        body: JSON.stringify({
          from: MTA_BENCH_FROM,
          subject: MTA_BENCH_SUBJECT,
          htmlBody: MTA_BENCH_HTML,
          textBody: MTA_BENCH_TEXT,
          recipients,
          trackOpens: false,
          trackClicks: false,
        }),
      });
      const body = (await response.json()) as {
        accepted?: { messageId: string }[];
        rejected?: unknown[];
      };
      if (response.status !== 202) throw new Error(`POST /emails/batch: ${response.status} ${JSON.stringify(body)}`);
      const at = now();
      for (const accepted of body.accepted ?? []) acceptedAt.set(accepted.messageId, at);
      failures += body.rejected?.length ?? 0;
    }
  };
  await Promise.all(Array.from({ length: INJECT_REQUESTS }, requester));
  return { startedAt, finishedAt: now(), acceptedAt, failures };
}
