// Mail the service sends on its own behalf (password reset, address verification, invitations,
// webhook-disabled notices): no tenant, no quota, no tracking. It is put on the durable queue
// "system" (the content sealed, since it carries live reset links) and delivered by its own worker
// (system-mail-job.ts), so a relay outage delays it and never loses it, and a request that asks
// for one does no more work than one that does not.
//
// The sender is the platform setting defaultFromAddress, else SYSTEM_MAIL_FROM (first boot), else
// no-reply@<PUBLIC_URL host> (localhost when that is an IP). It is signed with the DKIM key of a
// verified domain covering it in a tenant owned by a platform admin: the platform verifies its own
// sending domain with the same /domains flow as any tenant.
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { Config } from '../config.ts';
import type { Secrets } from '../secrets.ts';
import { seal } from '../crypto/sealed.ts';
import { enqueueJob } from '../queue/enqueue.ts';
import { getPlatformSettings } from '../db/platform-settings.ts';
import { systemMailDomain } from './addresses.ts';
import { domainAndParents, senderDomainOf } from './domain-names.ts';
import { parseMailbox } from './mailboxes.ts';
import type { ArcSealRequest } from './arc-seal.ts';

export interface SystemMailDeps {
  sequelize: Sequelize;
  config: Config;
  secrets: Pick<Secrets, 'encryptionKey'>;
}

export interface SystemMail {
  to: string;
  subject: string;
  html: string;
  text: string;
  locale?: string;
}

/**
 * A message the caller composed whole (a TLS report's multipart/report, RFC 8460 §5.3), From included:
 * the worker signs it with the platform's key and sends it as it is.
 */
export interface SystemRawMail {
  to: string;
  /** For the logs; the message carries its own Subject. */
  subject: string;
  /** The MIME message, base64. */
  raw: string;
  /** Header fields the DKIM signature covers beyond the usual ones (TLS-Report-Domain …). */
  signHeaders?: string[];
  /**
   * The envelope sender, when the caller chose it: a forward's SRS address (inbound-routing/forward.ts),
   * which reverses to the original sender; null, the null sender `<>` (a forward's bounce returned to
   * its original sender: inbound-routing/srs-bounce.ts). Absent: the platform's return path, as for all
   * system mail.
   */
  envelopeFrom?: string | null;
  /** ARC-seal it with the platform's key before signing (a forward: arc-seal.ts), saying this. */
  arcSeal?: ArcSealRequest;
}

/** What a system job carries once unsealed: the mail and the local part of its fixed Message-ID. */
export type SystemMailContent = (SystemMail | SystemRawMail) & { messageKey: string };

export const SYSTEM_QUEUE = 'system' as const;
/** With the send backoff (SEND_RETRY_BASE_MS doubled per attempt) this rides out a relay outage of hours. */
export const SYSTEM_MAIL_MAX_ATTEMPTS = 10;
const DISPLAY_NAME = 'svc';

/** A domain mail can come from on the Internet: not an IP, not a single label, not a reserved or private name. */
export function isRoutableMailDomain(domain: string): boolean {
  if (isIP(domain) || !domain.includes('.')) return false;
  return !/(^|\.)(localhost|local|localdomain|internal|invalid|test|example|lan|home\.arpa)$/i.test(domain);
}

export interface SystemSender {
  /** The From header (display name and address). */
  from: string;
  address: string;
  domain: string;
  source: 'setting' | 'environment' | 'fallback';
  routable: boolean;
}

function sender(mailbox: string, source: SystemSender['source']): SystemSender {
  const parsed = parseMailbox(mailbox);
  const address = (parsed?.address ?? mailbox).toLowerCase();
  const domain = senderDomainOf(address) ?? 'localhost';
  const from = parsed?.name ? parsed.formatted : `${DISPLAY_NAME} <${address}>`;
  return { from, address, domain, source, routable: isRoutableMailDomain(domain) };
}

export async function resolveSystemSender(sequelize: Sequelize, config: Config): Promise<SystemSender> {
  const { defaultFromAddress } = await getPlatformSettings(sequelize);
  if (defaultFromAddress) return sender(defaultFromAddress, 'setting');
  if (config.systemMailFrom) return sender(config.systemMailFrom, 'environment');
  return sender(`no-reply@${systemMailDomain(config)}`, 'fallback');
}

export const SYSTEM_SENDER_FIX =
  'Set the platform setting defaultFromAddress (`svc platform settings set defaultFromAddress=no-reply@mail.yourdomain.com`, ' +
  'or PATCH /platform/settings) or SYSTEM_MAIL_FROM to an address on a domain you own, then verify that domain in one of ' +
  'your own tenants (`svc domains add|dns|verify <domain>`) so system mail is DKIM-signed.';

/** Why system mail must not leave with this sender, or null when it may. Production refuses non-routable senders. */
export function systemSenderRefusal(senderInfo: SystemSender, config: Pick<Config, 'nodeEnv'>): string | null {
  if (config.nodeEnv !== 'production' || senderInfo.routable) return null;
  return `system mail is not sent from ${senderInfo.address}: in production the sender must be on a routable domain. ${SYSTEM_SENDER_FIX}`;
}

/**
 * The tenant whose verified domain signs system mail from `domain`: a tenant owned by a platform
 * admin, with a verified domain that is the sender's domain or its closest parent. Null: unsigned.
 */
export async function platformSigningTenant(
  sequelize: Sequelize,
  domain: string,
): Promise<{ tenantId: string; domainName: string } | null> {
  const rows = await sequelize.query<{ tenant_id: string; name: string }>(
    `SELECT d.tenant_id, d.name FROM domains d
      WHERE d.status = 'verified' AND d.name IN (:names)
        AND EXISTS (SELECT 1 FROM memberships m JOIN admins a ON a.id = m.admin_id
                     WHERE m.tenant_id = d.tenant_id AND m.role = 'owner' AND a.is_platform_admin)
      ORDER BY length(d.name) DESC, d.verified_at ASC LIMIT 1`,
    { replacements: { names: domainAndParents(domain) }, type: QueryTypes.SELECT },
  );
  return rows[0] ? { tenantId: rows[0].tenant_id, domainName: rows[0].name } : null;
}

/** The job payload of a system mail: its content sealed under the encryption key. */
export function systemMailPayload(
  secrets: Pick<Secrets, 'encryptionKey'>,
  mail: SystemMail | SystemRawMail,
): Record<string, unknown> {
  const content: SystemMailContent = { ...mail, messageKey: randomUUID() };
  return { sealed: seal(secrets.encryptionKey, JSON.stringify(content)) };
}

/** Puts a system mail on the durable queue (in `transaction` when given: it commits with the change that asked for it). */
export async function sendSystemMail(
  deps: SystemMailDeps,
  mail: SystemMail | SystemRawMail,
  transaction?: Transaction,
): Promise<{ jobId: string }> {
  const jobId = await enqueueJob(
    deps.sequelize,
    { queue: SYSTEM_QUEUE, payload: systemMailPayload(deps.secrets, mail), maxAttempts: SYSTEM_MAIL_MAX_ATTEMPTS },
    transaction,
  );
  return { jobId };
}

export interface SystemSenderStatus {
  from: string;
  /** The sender's domain: the one a platform admin's tenant must verify for system mail to be signed. */
  domain: string;
  source: SystemSender['source'];
  routable: boolean;
  /** The domain whose key signs system mail, or null when it goes out unsigned. */
  signedBy: string | null;
}

/** For /health/ready and the dashboard: who system mail comes from and whether it is signed. */
export async function systemSenderStatus(sequelize: Sequelize, config: Config): Promise<SystemSenderStatus> {
  const current = await resolveSystemSender(sequelize, config);
  const signing = current.routable ? await platformSigningTenant(sequelize, current.domain) : null;
  return {
    from: current.from,
    domain: current.domain,
    source: current.source,
    routable: current.routable,
    signedBy: signing?.domainName ?? null,
  };
}

export interface CapturedMessage {
  id: string;
  messageId: string;
  envelopeTo: string[];
  subject: string | null;
  raw: string;
  createdAt: Date;
}

/** The newest captured message addressed to `address` (tests and the CLI read system mail this way). */
export async function latestCapturedMessageTo(sequelize: Sequelize, address: string): Promise<CapturedMessage | null> {
  const rows = await sequelize.query<CapturedMessage>(
    `SELECT id, message_id AS "messageId", envelope_to AS "envelopeTo", subject, raw, created_at AS "createdAt"
       FROM captured_messages WHERE lower(:address) = ANY (SELECT lower(unnest(envelope_to)))
      ORDER BY created_at DESC LIMIT 1`,
    { replacements: { address }, type: QueryTypes.SELECT },
  );
  return rows[0] ?? null;
}
