// The forward action (docs/inbound.md step 5): a routed message re-sent to the route's address as it
// was stored — forged Authentication-Results removed, ours on top (parse.ts), every original header and
// the original DKIM signature untouched, so the signature still verifies where it arrives.
// It leaves through the platform's durable system-mail queue (mail/system-mail.ts): retried through a
// relay outage, sealed at rest since it is someone's mail, and signed there with the platform's DKIM
// key (the verified domain of the platform's sender), which a receiver can hold the forwarder to.
// The envelope sender is rewritten with SRS (srs.ts) at our return-path domain, whose SPF lists our
// servers: SPF passes at the receiver, and a bounce to it names the original sender. A message that
// came with the null sender (a bounce) is forwarded with the platform's own return path, never with a
// made-up sender a second bounce could go to.
// It is ARC-sealed (RFC 8617, mail/arc-seal.ts) with the same platform key, the seal carrying the
// Authentication-Results we wrote at receipt: i=1 with cv=none when no chain arrived, the next instance
// with cv=pass when the chain that arrived validated. A chain that arrived broken is not sealed (a seal
// over cv=fail only says the chain is dead), nor is a message whose verdicts we never wrote.
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import type { Sequelize, Transaction } from 'sequelize';
import type { Config } from '../../config.ts';
import type { Secrets } from '../../secrets.ts';
import { ValidationError } from '../../errors.ts';
import { cachedPlatformSettings } from '../../db/platform-settings.ts';
import { systemMailDomain } from '../../mail/addresses.ts';
import { parseMailbox } from '../../mail/mailboxes.ts';
import { sendSystemMail } from '../../mail/system-mail.ts';
import type { ArcSealRequest } from '../../mail/arc-seal.ts';
import { srsForward } from './srs.ts';
import { ourAuthResults } from './verdicts.ts';

const gunzipAsync = promisify(gunzip);

export interface ForwardDeps {
  sequelize: Sequelize;
  config: Config;
  secrets: Pick<Secrets, 'linkSigningKey' | 'encryptionKey'>;
}

export interface ForwardInput {
  inboundId: string;
  /** The route's forward address. */
  to: string;
  /** The stored source (parse.ts RoutedRead.rawGzip). */
  rawGzip: Uint8Array;
  /** The envelope sender it came with; null for `<>`. */
  mailFrom: string | null;
}

/**
 * The domain of SRS addresses: the platform's return-path domain (its MX and SPF are ours), else the
 * system mail domain. Asked per forward and per SRS recipient at RCPT TO, so from the kept settings.
 */
export async function srsDomain(deps: Pick<ForwardDeps, 'sequelize' | 'config'>): Promise<string> {
  return (await cachedPlatformSettings(deps.sequelize)).returnPathDomain ?? systemMailDomain(deps.config);
}

/** The authserv-id of the Authentication-Results the inbound listener writes (and removes when forged). */
export function inboundAuthservId(config: Pick<Config, 'publicUrl'>): string {
  return systemMailDomain(config);
}

/** What the ARC seal of a forward says, from our Authentication-Results on the stored message; null: no seal. */
export function arcSealRequest(raw: Buffer, authservId: string): ArcSealRequest | null {
  const authResults = ourAuthResults(raw, authservId);
  if (authResults === null) return null;
  const arc = /(?:^|;)\s*arc=([a-z]+)/i.exec(authResults)?.[1]?.toLowerCase() ?? 'none';
  if (arc !== 'none' && arc !== 'pass') return null;
  return { authResults, cv: arc };
}

/**
 * Queues the forward of one stored inbound message (in `transaction` when given, so that it commits
 * with the message's status). Answers the system-mail job and the envelope sender used.
 */
export async function forwardInbound(
  deps: ForwardDeps,
  ctx: { tenantId: string },
  input: ForwardInput,
  transaction?: Transaction,
): Promise<{ jobId: string; envelopeFrom: string | null }> {
  const to = parseMailbox(input.to)?.address;
  if (!to)
    throw new ValidationError(`The forward address ${input.to} of inbound message ${input.inboundId} is no address`);
  // Inflated by libuv's pool, never on the event loop.
  const raw = await gunzipAsync(input.rawGzip);
  const envelopeFrom = input.mailFrom
    ? srsForward(deps.secrets.linkSigningKey, input.mailFrom, await srsDomain(deps))
    : undefined;
  const { jobId } = await sendSystemMail(
    deps,
    {
      to,
      subject: `forward of inbound message ${input.inboundId} (tenant ${ctx.tenantId})`,
      raw: raw.toString('base64'),
      envelopeFrom,
      arcSeal: arcSealRequest(raw, inboundAuthservId(deps.config)) ?? undefined,
    },
    transaction,
  );
  return { jobId, envelopeFrom: envelopeFrom ?? null };
}
