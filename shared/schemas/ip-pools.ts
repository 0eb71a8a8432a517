// IP pools and their warm-up (issue 29, docs/mta.md "IP pools and warm-up"): /platform/ip-pools,
// `svc pools` and its screen. Platform admins only.
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, OneOf, Timestamp, Uuid } from './common.ts';

export const MAIL_STREAMS = ['transactional', 'campaign'] as const;
export const MailStream = OneOf(MAIL_STREAMS, {
  description: "transactional mail, or a campaign's sends",
});
export type MailStream = Static<typeof MailStream>;

/** Longest warm-up a schedule may describe. */
export const MAX_WARMUP_DAYS = 365;

const ProviderKey = Type.String({
  pattern: '^[a-z0-9][a-z0-9_-]{0,49}$',
  description: "a provider key of daemon/mta/providers.ts ('google', 'yahoo', 'microsoft', 'apple', 'default')",
});

export const WarmupSchedule = Type.Object(
  {
    days: Type.Integer({ minimum: 1, maximum: MAX_WARMUP_DAYS, description: 'length of the warm-up in days' }),
    providers: Type.Record(
      ProviderKey,
      Type.Array(Type.Integer({ minimum: 0, maximum: 100_000_000 }), { minItems: 1, maxItems: MAX_WARMUP_DAYS }),
      {
        description:
          'per provider, the most messages an address in warm-up may send to it on day 1, 2, … (one entry per day); ' +
          "'default' is required and applies to providers not listed. After the last day an address is warm: no ceiling.",
      },
    ),
  },
  { additionalProperties: false, description: 'WarmupScheduleDto' },
);
export type WarmupSchedule = Static<typeof WarmupSchedule>;

const Ip = Type.String({ minLength: 2, maxLength: 45, description: 'IPv4 or IPv6 address this host can bind' });
const EhloName = Type.String({
  minLength: 1,
  maxLength: 253,
  pattern: '^[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*\\.?$',
  description: "the name said in EHLO: the IP's PTR, and it must resolve back to the IP",
});
const Weight = Type.Integer({ minimum: 1, maximum: 1000, description: "the address's share of the pool's traffic" });

export const CreateIpPoolAddressBody = Type.Object(
  {
    ip: Ip,
    ehloName: EhloName,
    weight: Type.Optional(Weight),
    warmup: Type.Optional(
      Type.Boolean({ default: true, description: 'a new address warms up from today (false: already warm)' }),
    ),
    warmupStartedAt: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'day 1 of the warm-up (default: now); a date in the past resumes a warm-up begun elsewhere',
      }),
    ),
  },
  { additionalProperties: false, description: 'CreateIpPoolAddressDto' },
);
export type CreateIpPoolAddressBody = Static<typeof CreateIpPoolAddressBody>;

export const UpdateIpPoolAddressBody = Type.Object(
  {
    ehloName: Type.Optional(EhloName),
    weight: Type.Optional(Weight),
    warmupStartedAt: Type.Optional(
      Nullable(Timestamp, {
        description:
          'when the warm-up started (day 1); null: the address is warm; a date in the past resumes a warm-up',
      }),
    ),
  },
  { additionalProperties: false, description: 'UpdateIpPoolAddressDto' },
);
export type UpdateIpPoolAddressBody = Static<typeof UpdateIpPoolAddressBody>;

export const CreateIpPoolBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    description: Type.Optional(Type.String({ maxLength: 500 })),
    addresses: Type.Optional(Type.Array(CreateIpPoolAddressBody, { maxItems: 256 })),
    schedule: Type.Optional(WarmupSchedule),
  },
  { additionalProperties: false, description: 'CreateIpPoolDto' },
);
export type CreateIpPoolBody = Static<typeof CreateIpPoolBody>;

export const UpdateIpPoolBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  },
  { additionalProperties: false, description: 'UpdateIpPoolDto' },
);
export type UpdateIpPoolBody = Static<typeof UpdateIpPoolBody>;

export const AssignIpPoolBody = Type.Object(
  {
    tenantId: Uuid,
    projectId: Type.Optional(Uuid),
    stream: Type.Optional(MailStream),
  },
  {
    additionalProperties: false,
    description:
      "AssignIpPoolDto: the tenant's mail (narrowed to one project and/or stream) leaves from this pool; replaces an assignment of the same scope",
  },
);
export type AssignIpPoolBody = Static<typeof AssignIpPoolBody>;

export const IpPoolAssignment = Type.Object({
  id: Uuid,
  poolId: Uuid,
  tenantId: Uuid,
  tenantName: Type.String(),
  projectId: Nullable(Uuid),
  stream: Nullable(MailStream),
  createdAt: Timestamp,
});
export type IpPoolAssignment = Static<typeof IpPoolAssignment>;

export const ProviderWarmup = Type.Object({
  provider: Type.String(),
  /** Recipients this address sent to the provider today (UTC), counted once they reached its MX hosts. */
  sent: Type.Integer(),
  /** Of them, deferred or bounced by the provider. */
  refused: Type.Integer(),
  /**
   * Days of this warm-up before today on which the provider deferred or bounced at least 10 % of at least 20
   * recipients: each repeats its step instead of advancing, and the warm-up lasts a day longer.
   */
  heldDays: Type.Integer(),
  /** The schedule's step in force today (its day less the held days; one back while today is held); null when warm. */
  step: Nullable(Type.Integer()),
  /** Today's ceiling (the step's); null: none (the address is warm). */
  ceiling: Nullable(Type.Integer()),
});
export type ProviderWarmup = Static<typeof ProviderWarmup>;

export const IpPoolAddress = Type.Object({
  id: Uuid,
  ip: Type.String(),
  ehloName: Type.String(),
  weight: Type.Integer(),
  warmupStartedAt: Nullable(Timestamp),
  warmup: Type.Object({
    state: OneOf(['warming', 'warm'] as const),
    /** Calendar day of the warm-up today (1-based); null when warm with every provider. */
    day: Nullable(Type.Integer()),
    days: Type.Integer(),
    providers: Type.Array(ProviderWarmup),
  }),
  createdAt: Timestamp,
});
export type IpPoolAddress = Static<typeof IpPoolAddress>;

export const IpPool = Type.Object({
  id: Uuid,
  name: Type.String(),
  description: Nullable(Type.String()),
  schedule: WarmupSchedule,
  /** The shipped default schedule applies (none set for this pool). */
  defaultSchedule: Type.Boolean(),
  addresses: Type.Array(IpPoolAddress),
  assignments: Type.Array(IpPoolAssignment),
  /** The UTC day the counts are of. */
  today: Type.String({ format: 'date' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type IpPool = Static<typeof IpPool>;

export const IpPoolList = Type.Object({ data: Type.Array(IpPool) });
export type IpPoolList = Static<typeof IpPoolList>;

export const IpPoolParams = Type.Object({ poolId: Uuid });
export type IpPoolParams = Static<typeof IpPoolParams>;
export const IpPoolAddressParams = Type.Object({ poolId: Uuid, addressId: Uuid });
export type IpPoolAddressParams = Static<typeof IpPoolAddressParams>;
export const IpPoolAssignmentParams = Type.Object({ poolId: Uuid, assignmentId: Uuid });
export type IpPoolAssignmentParams = Static<typeof IpPoolAssignmentParams>;
