// What a stranger's mail may cost a tenant (docs/inbound.md "Safe and fast"): messages per sending
// address and per client IP a minute, and the tenant's messages a day by plan. Counted in Redis when
// REDIS_URL is set (every SMTP node sees the same counts, as the API's limits), else in this process,
// with @fastify/rate-limit's stores (plugins/rate-limit.ts createAttemptCounter). Checked at RCPT TO,
// counted when the message is stored, each time all counters in one round trip (countTogether).
import type { Redis } from 'ioredis';
import { planLimits } from '../../shared/constants.ts';
import { countTogether, createAttemptCounter } from '../plugins/rate-limit.ts';

/** A sending address's messages a minute to routed recipients: a busy mailing list stays well under it. */
export const INBOUND_MESSAGES_PER_SENDER_PER_MINUTE = 120;
/** A client IP's messages a minute: a large provider's outbound host sends for many senders. */
export const INBOUND_MESSAGES_PER_IP_PER_MINUTE = 600;
const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

/** The largest routed message `plan` takes (PLANS in shared/constants.ts). */
export function maxRoutedMessageBytes(plan: string): number {
  return planLimits(plan).inboundMessageBytes;
}

/** The largest single decoded attachment `plan` takes in a routed message: checked once parsed, at the end of DATA. */
export function maxRoutedAttachmentBytes(plan: string): number {
  return planLimits(plan).inboundAttachmentBytes;
}

/** The 552 text for a routed message with an attachment over `limit` (null: none is), for the smallest plan of its recipients. */
export function attachmentRefusal(largestAttachmentBytes: number, plans: string[]): string | null {
  const limit = Math.min(...plans.map(maxRoutedAttachmentBytes));
  return largestAttachmentBytes > limit
    ? `An attachment of ${largestAttachmentBytes} bytes exceeds the ${limit} bytes per attachment its recipient accepts.`
    : null;
}

/** Messages a tenant may receive in a day: as many as its plan sends in a month (free: 100). */
export function dailyInboundLimit(plan: string): number {
  return planLimits(plan).monthlyEmails;
}

export interface InboundLimits {
  /** Why `mailFrom`/`clientIp` may not send to `tenantId` now, or null. */
  refusal(
    sender: { mailFrom: string | null; clientIp: string },
    tenant: { tenantId: string; plan: string },
  ): Promise<string | null>;
  /** Counts one stored message. */
  count(sender: { mailFrom: string | null; clientIp: string }, tenantIds: string[]): Promise<void>;
}

export function createInboundLimits(options: { redis: Redis | null; namespace: string }): InboundLimits {
  const counter = (max: number, windowMs: number) =>
    createAttemptCounter({ redis: options.redis, namespace: `${options.namespace}inbound:`, max, windowMs });
  const bySender = counter(INBOUND_MESSAGES_PER_SENDER_PER_MINUTE, MINUTE_MS);
  const byIp = counter(INBOUND_MESSAGES_PER_IP_PER_MINUTE, MINUTE_MS);
  // The window's max is only what the store is told; the plan's limit is compared here.
  const byTenant = counter(Number.MAX_SAFE_INTEGER, DAY_MS);
  const senderKey = (mailFrom: string | null) => `from:${(mailFrom ?? '<>').toLowerCase()}`;

  return {
    async refusal(sender, tenant) {
      const [fromCount, ipCount, tenantCount] = await countTogether(
        [
          { counter: bySender, key: senderKey(sender.mailFrom) },
          { counter: byIp, key: `ip:${sender.clientIp}` },
          { counter: byTenant, key: `tenant:${tenant.tenantId}` },
        ],
        'read',
      );
      if (fromCount >= bySender.max)
        return `Too many messages from <${sender.mailFrom ?? ''}>: at most ${bySender.max} a minute, try again later.`;
      if (ipCount >= byIp.max)
        return `Too many messages from ${sender.clientIp}: at most ${byIp.max} a minute, try again later.`;
      const daily = dailyInboundLimit(tenant.plan);
      if (tenantCount >= daily)
        return `This recipient's service has received its ${daily} messages for today, try again later.`;
      return null;
    },
    async count(sender, tenantIds) {
      await countTogether(
        [
          { counter: bySender, key: senderKey(sender.mailFrom) },
          { counter: byIp, key: `ip:${sender.clientIp}` },
          ...[...new Set(tenantIds)].map((tenantId) => ({ counter: byTenant, key: `tenant:${tenantId}` })),
        ],
        'hit',
      );
    },
  };
}
