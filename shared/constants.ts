// Names both the daemon and the CLI use. Changing one is an API change.

export const API_KEY_SCOPES = [
  'email:send',
  'email:read',
  'templates:read',
  /** Extension: create, edit, preview and publish templates with a key (CI pipelines). */
  'templates:write',
  'contacts:read',
  'contacts:write',
  'suppressions:read',
  'suppressions:write',
  'webhooks:manage',
  /** Extension: list the tenant's sending domains (`svc templates check` verifies a From domain). */
  'domains:read',
  'campaigns:read',
  'campaigns:write',
  'projects:read',
  'projects:write',
  /** Inbound routing (issue 52): read routes, received messages and the tenant's inbound address. */
  'inbound:read',
  /** Inbound routing: create, change and remove routes, replay messages, rotate the inbound address. */
  'inbound:write',
] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

export const API_KEY_PREFIX = { live: 'svc_live_', test: 'svc_test_' } as const;
export type ApiKeyEnvironment = keyof typeof API_KEY_PREFIX;

/** Member roles, weakest first: a role may do everything the roles before it may. */
export const MEMBER_ROLES = ['viewer', 'developer', 'admin', 'owner'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

export const EMAIL_EVENT_TYPES = [
  'email.sent',
  'email.delivered',
  'email.opened',
  'email.clicked',
  'email.bounced',
  'email.complained',
  'email.failed',
  // An inbound message answered this send (its In-Reply-To or References name the send's Message-ID):
  // issue 52 §3, inbound-routing/reply-link.ts.
  'email.replied',
  'contact.unsubscribed',
  // Not about one email: the tenant's complaint or hard-bounce rate passed the warning (or pause) level.
  'tenant.sending_at_risk',
  // The outbound MTA reacted to a provider's reply to this tenant's mail: a provider (or destination)
  // suspended or slowed for a while, or the tenant's sending paused (docs/mta.md "Shaping and reactions").
  'delivery.reaction',
  // A message for one of the tenant's inbound routes (docs/inbound.md): the parsed message, delivered
  // to the route's endpoint only.
  'inbound.received',
] as const;
export type EventType = (typeof EMAIL_EVENT_TYPES)[number];

// CANCELLED: a campaign send taken back by the campaign's cancel before a worker picked it up.
export const EMAIL_STATUSES = [
  'QUEUED',
  'SENDING',
  'SENT',
  'DELIVERED',
  'BOUNCED',
  'COMPLAINED',
  'FAILED',
  'SUPPRESSED',
  'CANCELLED',
] as const;
export type EmailStatus = (typeof EMAIL_STATUSES)[number];

export const SCHEDULED_STATUSES = ['PENDING', 'SENT', 'FAILED', 'CANCELLED'] as const;
export const CAMPAIGN_STATUSES = ['DRAFT', 'SCHEDULED', 'SENDING', 'SENT', 'CANCELLED'] as const;
export const SUPPRESSION_REASONS = ['bounce', 'complaint', 'unsubscribe', 'manual'] as const;

const MIB = 1024 * 1024;

/**
 * What each plan allows. monthlyEmails: sends a cycle (daemon/modules/quota), and routed messages a day
 * (daemon/smtp/inbound-limits.ts). inboundMessageBytes: the largest routed message (the inbound
 * listener's SIZE, 15 MB, is the most any takes), so a free tenant's stored sources stay small while a
 * paying one receives what the HTTP API would send. inboundAttachmentBytes: the largest single decoded
 * attachment of a routed message, what its webhook carries inline or by URL (docs/inbound.md).
 */
export const PLANS = {
  free: { monthlyEmails: 100, inboundMessageBytes: 5 * MIB, inboundAttachmentBytes: 2 * MIB },
  starter: { monthlyEmails: 5000, inboundMessageBytes: 10 * MIB, inboundAttachmentBytes: 5 * MIB },
  pro: { monthlyEmails: 25000, inboundMessageBytes: 15 * MIB, inboundAttachmentBytes: 10 * MIB },
  business: { monthlyEmails: 100000, inboundMessageBytes: 15 * MIB, inboundAttachmentBytes: 10 * MIB },
} as const;
export type PlanSlug = keyof typeof PLANS;
export type PlanLimits = (typeof PLANS)[PlanSlug];

/** A tenant's plan by its slug; a slug no plan has (a plan since removed) gets the free plan's limits. */
export function planLimits(plan: string): PlanLimits {
  return Object.hasOwn(PLANS, plan) ? PLANS[plan as PlanSlug] : PLANS.free;
}

export const QUEUES = ['send', 'scheduled', 'webhook', 'maintenance', 'system', 'campaign'] as const;
export type QueueName = (typeof QUEUES)[number];

export const MAX_RECIPIENTS_PER_SEND = 50;
export const MAX_BATCH_RECIPIENTS = 100;
/** Deepest nesting of objects and arrays a JSON body may have (daemon/plugins/json-shape.ts, json-body.ts). */
export const MAX_JSON_DEPTH = 32;
/**
 * Most members (object keys plus array items) a JSON body may hold unless its route allows more
 * (daemon/plugins/request-body.ts): parsing and checking 10,000 keys takes a few milliseconds of the
 * event loop; 900,000 took seconds. A send's data, a batch of 100 with its data fit well within it.
 */
export const MAX_JSON_MEMBERS = 10_000;
export const USER_AGENT_LABEL = 'svc-webhooks/1.0';
export const TENANT_HEADER = 'x-tenant-id';
