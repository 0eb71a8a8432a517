// Mail the service sends on its own behalf (password reset, address verification): no tenant, no
// quota, no tracking. It goes through the same transport layer as tenant mail: relayed through
// SMTP_URL when set, else captured (raw RFC 822 in captured_messages, tenant_id NULL).
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { Config } from '../config.ts';
import type { Secrets } from '../secrets.ts';
import { defaultRelay, deliverMessage } from './transport.ts';

export interface SystemMailDeps {
  sequelize: Sequelize;
  config: Config;
  secrets: Secrets;
}

export interface SystemMail {
  to: string;
  subject: string;
  html: string;
  text: string;
  locale?: string;
}

/** The host part of system addresses: PUBLIC_URL's host name, or localhost for a bare IP. */
export function systemMailDomain(config: Config): string {
  const host = new URL(config.publicUrl).hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) || host === '' ? 'localhost' : host;
}

export function systemFromAddress(config: Config): string {
  return `svc <no-reply@${systemMailDomain(config)}>`;
}

export async function sendSystemMail(deps: SystemMailDeps, mail: SystemMail): Promise<{ messageId: string }> {
  const messageId = `<${randomUUID()}@${systemMailDomain(deps.config)}>`;
  const result = await deliverMessage(
    defaultRelay(deps.config),
    {
      from: systemFromAddress(deps.config),
      to: mail.to,
      subject: mail.subject,
      html: mail.html,
      text: mail.text,
      messageId,
      headers: mail.locale ? { 'Content-Language': mail.locale } : undefined,
    },
    { sequelize: deps.sequelize, tenantId: null, emailId: null },
    deps.config,
  );
  return { messageId: result.messageId };
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
