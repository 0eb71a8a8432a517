// GET /platform/doctor and `svc doctor`: is this deployment ready? One line per check.
import { Type, type Static } from '@sinclair/typebox';

export const DoctorCheck = Type.Object({
  name: Type.String({ description: 'stable identifier of the check, e.g. "relay"' }),
  ok: Type.Boolean(),
  /** What was found, in a sentence. */
  message: Type.String(),
  /** What to do about it (present when ok is false, or when there is advice). */
  fix: Type.Optional(Type.String()),
});
export type DoctorCheck = Static<typeof DoctorCheck>;

export const DoctorNode = Type.Object(
  {
    hostname: Type.String(),
    role: Type.String({ description: 'ROLE of the node: api, worker, smtp or all' }),
    delivery: Type.String({ description: 'DELIVERY of the node: relay or direct' }),
  },
  { description: 'the node that ran the checks: each node checks its own addresses' },
);
export type DoctorNode = Static<typeof DoctorNode>;

export const DoctorReport = Type.Object({
  ok: Type.Boolean({ description: 'true when every check passed' }),
  node: Type.Optional(DoctorNode),
  checks: Type.Array(DoctorCheck),
});
export type DoctorReport = Static<typeof DoctorReport>;
