// The outbound MTA's queue per destination domain (issue 28, docs/mta.md "Visibility"): GET /platform/queue
// and the retry, hold and release actions (`svc queue`, its TUI screen), and the `outbound` part of
// /health/queues. Platform admins only, except the health totals: the spool holds every tenant's mail.
import { ActiveReactionBody } from './shaping.ts';
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, PageMeta, PageQuery, Timestamp, Uuid } from './common.ts';

const Domain = Type.String({
  minLength: 1,
  maxLength: 253,
  description: 'a destination domain (the part after @); Unicode names are matched as their punycode form',
});

export const QueueDomainParams = Type.Object({ domain: Domain });
export type QueueDomainParams = Static<typeof QueueDomainParams>;

export const OutboundQueueQuery = Type.Intersect([PageQuery(500, 100), Type.Object({ domain: Type.Optional(Domain) })]);
export type OutboundQueueQuery = Static<typeof OutboundQueueQuery>;

export const OutboundDestination = Type.Object({
  domain: Type.String({ description: 'destination domain, lower case, an IDN as its A-label' }),
  queued: Type.Integer({ description: 'messages not tried yet' }),
  deferred: Type.Integer({ description: 'messages tried and answered with a temporary failure, waiting to retry' }),
  inFlight: Type.Integer({ description: 'messages claimed by the MTA loop (being delivered now)' }),
  waiting: Type.Optional(
    Type.Integer({
      description: 'messages held by a wait of ours (warm-up), not tried and not deferred by the destination',
    }),
  ),
  waitReason: Type.Optional(Nullable(Type.String(), { description: 'why they wait (warm-up: which ceiling)' })),
  waitUntil: Type.Optional(Nullable(Timestamp, { description: 'when the first waiting message goes' })),
  oldestAt: Nullable(Timestamp, { description: 'when the oldest message still spooled for the domain was accepted' }),
  nextTryAt: Nullable(Timestamp, { description: 'the earliest next try of a deferred message' }),
  lastAttemptAt: Nullable(Timestamp, { description: 'when the latest deferred attempt was made' }),
  lastResponse: Nullable(Type.String(), { description: "the destination's reply to that attempt" }),
  oldestWaitingAgeMs: Type.Integer({
    description: 'how long the oldest due message has waited past its run time unclaimed (0 when none waits)',
  }),
  stuck: Type.Boolean({
    description:
      'not held, and a due message has waited longer than QUEUE_STUCK_AFTER_MS: the MTA loop is not taking it',
  }),
  held: Type.Boolean({ description: 'an operator holds the domain: its messages stay spooled and are not tried' }),
  heldAt: Nullable(Timestamp),
  heldBy: Nullable(Type.Object({ id: Uuid, email: Nullable(Type.String()) })),
  holdReason: Nullable(Type.String()),
});
export type OutboundDestination = Static<typeof OutboundDestination>;

export const NodeResolverHealth = Type.Object(
  {
    node: Type.String({ description: "the node's host name" }),
    healthy: Type.Boolean({ description: 'the canary names resolve: negative answers (NXDOMAIN) may be believed' }),
    since: Timestamp,
    lastError: Nullable(Type.String(), { description: "the canaries' failures at the latest failed check" }),
    canaries: Type.Array(Type.String(), { description: 'DNS_CANARY_NAMES' }),
    checkedAt: Timestamp,
  },
  {
    description:
      "a node's resolver as its MTA last checked it: while unhealthy, mail is deferred (reason `resolver unhealthy: …`), never bounced",
  },
);
export type NodeResolverHealth = Static<typeof NodeResolverHealth>;

export const SourceFaultBody = Type.Object(
  {
    node: Type.String({ description: "the node's host name" }),
    ip: Type.String({ description: 'the source address (an IP pool address, or OUTBOUND_ADDRESS)' }),
    reason: Type.String({ description: 'the response its deferrals record' }),
    since: Timestamp,
    lastSeenAt: Timestamp,
  },
  {
    description:
      'an operator alert: a source address this node could not bind (EADDRNOTAVAIL); its pool sends from its other addresses here, and the row goes once the address binds again',
  },
);
export type SourceFaultBody = Static<typeof SourceFaultBody>;

export const OutboundQueuePage = Type.Object({
  data: Type.Array(OutboundDestination),
  meta: PageMeta,
  delivery: Type.Union([Type.Literal('relay'), Type.Literal('direct')], {
    description: 'DELIVERY of the answering node: with relay, nothing delivers the spool until a direct node runs',
  }),
  resolver: Type.Array(NodeResolverHealth, {
    description: "each direct-delivery node's resolver health (one fault shown once, not as each message's deferral)",
  }),
  reactions: Type.Array(ActiveReactionBody, {
    description: "reactions to providers' replies in force (mta/reactions.ts): suspensions, slow-downs, tenant pauses",
  }),
  sourceFaults: Type.Array(SourceFaultBody, {
    description: 'source addresses a node cannot bind (an alert each: mail from them would never leave that node)',
  }),
});
export type OutboundQueuePage = Static<typeof OutboundQueuePage>;

export const HoldDestinationBody = Type.Object(
  {
    reason: Type.Optional(
      Type.String({ minLength: 1, maxLength: 500, description: 'why, shown in `svc queue` (e.g. "blocklisted us")' }),
    ),
  },
  { additionalProperties: false },
);
export type HoldDestinationBody = Static<typeof HoldDestinationBody>;

export const RetryDestinationAnswer = Type.Object({
  madeDue: Type.Integer({ description: 'messages whose next try was moved to now' }),
  destination: OutboundDestination,
});
export type RetryDestinationAnswer = Static<typeof RetryDestinationAnswer>;

/** Destinations /health/queues lists at most (to platform admins). */
export const HEALTH_DESTINATIONS_MAX = 50;

/** One destination in /health/queues (platform admins see them; others get the totals only). */
export const OutboundDestinationHealth = Type.Object({
  domain: Type.String(),
  queued: Type.Integer(),
  deferred: Type.Integer(),
  inFlight: Type.Integer(),
  held: Type.Boolean(),
  oldestAgeMs: Type.Integer({ description: 'age of the oldest message spooled for the domain' }),
  oldestWaitingAgeMs: Type.Integer({ description: 'how long the oldest due message has waited unclaimed' }),
  stuck: Type.Boolean(),
});
export type OutboundDestinationHealth = Static<typeof OutboundDestinationHealth>;

export const OutboundHealth = Type.Object(
  {
    delivery: Type.Union([Type.Literal('relay'), Type.Literal('direct')]),
    queued: Type.Integer(),
    deferred: Type.Integer(),
    inFlight: Type.Integer(),
    heldDestinations: Type.Integer(),
    oldestWaitingAgeMs: Type.Integer({
      description: 'over destinations not held: how long the oldest due message has waited unclaimed (0 when none)',
    }),
    stuck: Type.Boolean({ description: 'oldestWaitingAgeMs is over QUEUE_STUCK_AFTER_MS' }),
    resolverUnhealthy: Type.Optional(
      Type.Array(Type.Object({ node: Type.String(), since: Timestamp, lastError: Nullable(Type.String()) }), {
        description:
          "direct-delivery nodes whose resolver fails its canaries: their mail is deferred (GET /platform/queue's resolver)",
      }),
    ),
    destinations: Type.Optional(
      Type.Array(OutboundDestinationHealth, {
        description: `platform admins only: up to ${HEALTH_DESTINATIONS_MAX} destinations, oldest mail first (svc queue lists them all)`,
      }),
    ),
  },
  {
    description:
      "the outbound MTA's spool (DELIVERY=direct): mail waiting per destination domain; a stuck outbound queue makes ok false",
  },
);
export type OutboundHealth = Static<typeof OutboundHealth>;
