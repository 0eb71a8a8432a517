// Mail addressing, in one place: the service's own mail domain, the fixed mailboxes there
// (List-Unsubscribe's mailto, the DMARC `rua` address, the feedback loop), the VERP return path each
// send carries (`bounce-<email id>-<tag>@bounces.<verified domain>`, built by the send job and
// recognised by the inbound SMTP listener), the return-path label customers publish and whether a send
// may use it (returnPathFor), the reply address a send carries when its tenant asks for one
// (`reply+<log id>.<tag>@<platform inbound domain>`), and which SMTP answers are hard bounces. Infrastructure: it imports no
// module, so modules and mail/ may both use it.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { Sequelize } from 'sequelize';
import type { Config } from '../config.ts';
import { getPlatformSettings } from '../db/platform-settings.ts';
import { base32, base32Bytes } from './base32.ts';

/**
 * The port to a tenant's verified sender domains (modules/domains/signing.ts's DkimSigningCache is the
 * one given at wiring): mail/ reads whether a domain's return-path record checked out without
 * importing the domains module.
 */
export interface VerifiedDomains {
  verifiedDomain(
    tenantId: string,
    domain: string,
  ): Promise<{ name: string; recordChecks?: { returnPath?: { status: string } } } | null>;
}

export const UNSUBSCRIBE_MAILBOX = 'unsubscribe';
export const DMARC_MAILBOX = 'dmarc-reports';
export const FEEDBACK_MAILBOX = 'fbl';

/** The label under a customer's domain that bounces are routed through: `bounces.<domain>`. */
export const RETURN_PATH_LABEL = 'bounces';

const VERP_TAG_HEX_CHARS = 16;
/**
 * The local part of a VERP return path: the email id, then its tag. The email id alone is no secret (it
 * is each message's X-Service-Email-Id, in every webhook and API answer), so the address carries an
 * HMAC of it under a key derived from the daemon secret: only the service can write a return path, and
 * a bounce counts only at one it wrote. 64 bits: each guess costs an SMTP transaction. 60 characters,
 * inside the 64 a local part may have (RFC 5321 §4.5.3.1.1); lower-case hex, which mail systems keep.
 * The tag is optional in the pattern: a report's return path without one still names its send when read
 * (emailIdNamedByReturnPath); a bounce is accepted only with a tag that holds (emailIdOfReturnPath).
 */
const VERP = /^bounce-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:-([0-9a-f]{16}))?$/;

/** A return path's local part read, its tag not checked: the email id it names and its tag (null without one). */
function parseReturnPath(localPart: string): { emailId: string; tag: string | null } | null {
  const match = VERP.exec(localPart.toLowerCase());
  return match ? { emailId: match[1], tag: match[2] ?? null } : null;
}

/**
 * The email id a whole return path names (`<bounce-<id>[-<tag>]@…>`, brackets allowed), its tag not
 * checked: for reading a report whose own signature or arrival is what is trusted (an ARF report's
 * Original-Mail-From), never for accepting a bounce (emailIdOfReturnPath).
 */
export function emailIdNamedByReturnPath(address: string): string | null {
  const bare = address.trim().replace(/^<(.*)>$/, '$1');
  const at = bare.lastIndexOf('@');
  return at > 0 ? (parseReturnPath(bare.slice(0, at))?.emailId ?? null) : null;
}

/** What each kind of address the service writes is signed for; each gets a key of its own. */
export type AddressKeyUse = 'verp-return-path' | 'srs-envelope-sender' | 'reply-address';

/**
 * The key of one kind of signed address (VERP return paths, SRS envelope senders, reply addresses),
 * derived from the link-signing key so that a tag of one kind is never valid as another's.
 */
export function addressKey(linkSigningKey: Buffer, use: AddressKeyUse): Buffer {
  return createHmac('sha256', linkSigningKey).update(use).digest();
}

function verpTag(linkSigningKey: Buffer, emailId: string): string {
  return createHmac('sha256', addressKey(linkSigningKey, 'verp-return-path'))
    .update(emailId.toLowerCase())
    .digest('hex')
    .slice(0, VERP_TAG_HEX_CHARS);
}

/** The email id a return path's local part names, when the service wrote it (its tag holds); else null. */
export function emailIdOfReturnPath(localPart: string, linkSigningKey: Buffer): string | null {
  const parsed = parseReturnPath(localPart);
  if (!parsed?.tag) return null;
  const expected = Buffer.from(verpTag(linkSigningKey, parsed.emailId));
  return timingSafeEqual(Buffer.from(parsed.tag), expected) ? parsed.emailId : null;
}

/** The mailbox of reply addresses on the platform inbound domain: `reply+<log id>.<tag>@…`. */
export const REPLY_MAILBOX = 'reply';
const UUID_BYTES = 16;
/** 26 characters: the log id's 128 bits in base32. */
const REPLY_ID_CHARS = 26;
/** 65 bits, as many as a VERP tag's 64: each guess costs an SMTP transaction. */
const REPLY_TAG_CHARS = 13;
const REPLY_LOCAL = new RegExp(`^${REPLY_MAILBOX}\\+([a-z2-7]{${REPLY_ID_CHARS}})\\.([a-z2-7]{${REPLY_TAG_CHARS}})$`);

function replyTag(linkSigningKey: Buffer, emailId: string): string {
  const mac = createHmac('sha256', addressKey(linkSigningKey, 'reply-address')).update(emailId.toLowerCase()).digest();
  return base32(mac, REPLY_TAG_CHARS);
}

/**
 * The reply address of one send (docs/inbound.md "Reply addresses"): `reply+<log id>.<tag>@<platform
 * inbound domain>`, the log id's 16 bytes and an HMAC of it in lower-case base32 — 46 characters of local
 * part (64 allowed), which survive an MTA that lower-cases it. Only the service can write one.
 */
export function replyAddress(emailId: string, inboundDomain: string, linkSigningKey: Buffer): string {
  const id = base32(Buffer.from(emailId.replace(/-/g, ''), 'hex'), REPLY_ID_CHARS);
  return `${REPLY_MAILBOX}+${id}.${replyTag(linkSigningKey, emailId)}@${inboundDomain}`;
}

/** Whether a local part is in the shape of a reply address (its tag not checked). */
export function looksLikeReplyAddress(localPart: string): boolean {
  return localPart.toLowerCase().startsWith(`${REPLY_MAILBOX}+`);
}

/** The email id a reply address's local part names, when the service wrote it (its tag holds); else null. */
export function emailIdOfReplyAddress(localPart: string, linkSigningKey: Buffer): string | null {
  const match = REPLY_LOCAL.exec(localPart.toLowerCase());
  if (!match) return null;
  const bytes = base32Bytes(match[1], UUID_BYTES);
  // One spelling per id: the unused low bits of the last character must be zero.
  if (!bytes || base32(bytes, REPLY_ID_CHARS) !== match[1]) return null;
  const hex = bytes.toString('hex');
  const emailId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  const expected = Buffer.from(replyTag(linkSigningKey, emailId));
  return timingSafeEqual(Buffer.from(match[2]), expected) ? emailId : null;
}

/** RCPT answers that say the recipient does not exist: hard bounces (the recipient is suppressed). */
export const HARD_BOUNCE_CODES = new Set([550, 551, 553]);

/** The VERP envelope sender of one send, at its return-path domain. */
export function verpReturnPath(emailId: string, returnPathDomain: string, linkSigningKey: Buffer): string {
  return `bounce-${emailId}-${verpTag(linkSigningKey, emailId)}@${returnPathDomain}`;
}

export function returnPathName(domainName: string): string {
  return `${RETURN_PATH_LABEL}.${domainName}`;
}

/**
 * The domain for the envelope sender (Return-Path) of mail from `fromDomain`: `bounces.<verified domain>`
 * when the platform routes bounces through customer domains and the last check found that record
 * published; else null (the relay's own envelope sender is used).
 */
export async function returnPathFor(
  deps: { sequelize: Sequelize; dkimSigning: VerifiedDomains },
  tenantId: string,
  fromDomain: string,
): Promise<string | null> {
  const domain = await deps.dkimSigning.verifiedDomain(tenantId, fromDomain);
  if (!domain || domain.recordChecks?.returnPath?.status !== 'verified') return null;
  // The platform may have stopped routing bounces through customer domains since the last check.
  if (!(await getPlatformSettings(deps.sequelize)).returnPathDomain) return null;
  return returnPathName(domain.name);
}

/** The host part of the fallback sender: PUBLIC_URL's host name, or localhost for a bare IP. */
export function systemMailDomain(config: Pick<Config, 'publicUrl'>): string {
  const host = new URL(config.publicUrl).hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) || host === '' ? 'localhost' : host;
}

/** The platform inbound domain: INBOUND_DOMAIN, else `inbound.<mail domain>` (token and reply addresses). */
export function platformInboundDomain(config: Pick<Config, 'publicUrl' | 'inboundDomain'>): string {
  return config.inboundDomain ?? `inbound.${systemMailDomain(config)}`;
}

/** The domain of the fixed mailboxes when inbound mail is received; null when SMTP_INBOUND_PORT is off (advertise nothing). */
export function inboundMailDomain(config: Pick<Config, 'smtpInboundPort' | 'publicUrl'>): string | null {
  return config.smtpInboundPort > 0 ? systemMailDomain(config) : null;
}

/** `mailto:dmarc-reports@<mail domain>` for the DMARC record tenants publish, or null when inbound is off. */
export function dmarcReportAddress(config: Pick<Config, 'smtpInboundPort' | 'publicUrl'>): string | null {
  const domain = inboundMailDomain(config);
  return domain ? `${DMARC_MAILBOX}@${domain}` : null;
}
