// Projects and their optional SMTP relay. The password is write-only: answers say only whether one is set.
import { Type, type Static } from '@sinclair/typebox';
import { Timestamp, Uuid, Nullable, PlainName } from './common.ts';

export const ProjectSmtpInput = Type.Object(
  {
    host: Type.String({ minLength: 1, maxLength: 253 }),
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
    secure: Type.Boolean({ description: 'TLS from the first byte (port 465); false uses STARTTLS when offered' }),
    user: Type.Optional(Type.String({ maxLength: 320 })),
    pass: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
);

export const CreateProjectBody = Type.Object(
  { name: PlainName(200), smtp: Type.Optional(ProjectSmtpInput) },
  { additionalProperties: false, description: 'CreateProjectDto' },
);
export type CreateProjectBody = Static<typeof CreateProjectBody>;

export const UpdateProjectBody = Type.Object(
  {
    name: Type.Optional(PlainName(200)),
    smtp: Type.Optional(Nullable(ProjectSmtpInput, { description: 'null removes the project relay' })),
  },
  { additionalProperties: false, description: 'UpdateProjectDto' },
);
export type UpdateProjectBody = Static<typeof UpdateProjectBody>;

export const Project = Type.Object({
  id: Uuid,
  name: Type.String(),
  smtp: Nullable(
    Type.Object({
      host: Type.String(),
      port: Type.Integer(),
      secure: Type.Boolean(),
      user: Type.Union([Type.String(), Type.Null()]),
      passwordSet: Type.Boolean(),
      verifiedAt: Type.Union([Timestamp, Type.Null()]),
    }),
  ),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Project = Static<typeof Project>;

export const VerifySmtpResult = Type.Object({ ok: Type.Boolean(), error: Type.Optional(Type.String()) });
