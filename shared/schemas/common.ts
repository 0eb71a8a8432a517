// Pieces every area's schemas are built from: ids, addresses, pages and the error body.
import { Type, type TSchema, type Static } from '@sinclair/typebox';

export const Uuid = Type.String({ format: 'uuid', description: 'identifier (UUID)' });
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601, UTC' });
export const EmailAddress = Type.String({ format: 'email', maxLength: 320 });

export const IdParams = Type.Object({ id: Uuid });
export type IdParams = Static<typeof IdParams>;

export function PageQuery(maxLimit = 100, defaultLimit = 20) {
  return Type.Object({
    // Bounded so that (page - 1) * limit stays a valid OFFSET.
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: maxLimit, default: defaultLimit })),
  });
}
export const DefaultPageQuery = PageQuery();
export type PageQuery = { page?: number; limit?: number };

export const PageMeta = Type.Object({
  page: Type.Integer(),
  limit: Type.Integer(),
  total: Type.Integer(),
  totalPages: Type.Integer(),
});

export function Paged<T extends TSchema>(item: T) {
  return Type.Object({ data: Type.Array(item), meta: PageMeta });
}

export const ErrorBody = Type.Object(
  {
    statusCode: Type.Integer(),
    error: Type.String(),
    code: Type.String(),
    message: Type.String(),
    details: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
  },
  { $id: 'ErrorBody', description: 'Every error answer has this body.' },
);
export type ErrorBody = Static<typeof ErrorBody>;

export const OkBody = Type.Object({ ok: Type.Literal(true) });

/** Tenant header: required on tenant routes with a JWT; optional with an API key (the key decides). */
export const TenantHeaders = Type.Object({
  'x-tenant-id': Type.Optional(Uuid),
});
