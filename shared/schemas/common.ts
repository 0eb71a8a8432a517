// Pieces every area's schemas are built from: ids, addresses, pages and the error body.
import {
  Type,
  type SchemaOptions,
  type TLiteral,
  type TNull,
  type TSchema,
  type TUnion,
  type Static,
} from '@sinclair/typebox';

/**
 * `schema` or null: one way to write every nullable field. A schema with one primitive `type` becomes
 * `type: [T, "null"]` rather than a union: with Fastify's coercing validator a union's string branch
 * would turn a null in a request body into "" before the null branch is tried. Typed as the union it
 * means, so the type provider infers `T | null`.
 */
export function Nullable<T extends TSchema>(schema: T, options?: SchemaOptions): TUnion<[T, TNull]> {
  if (typeof schema.type === 'string' && schema.type !== 'object' && schema.type !== 'array') {
    return Type.Unsafe<Static<T> | null>({ ...schema, ...options, type: [schema.type, 'null'] }) as unknown as TUnion<
      [T, TNull]
    >;
  }
  return Type.Union([schema, Type.Null()], options);
}

/** One of these strings, as a union of literals that keeps each literal's type (a plain .map() would widen it). */
export function OneOf<const T extends readonly string[]>(
  values: T,
  options?: SchemaOptions,
): TUnion<{ -readonly [K in keyof T]: TLiteral<T[K] & string> }> {
  return Type.Union(
    values.map((value) => Type.Literal(value)),
    options,
  ) as never;
}

export const Uuid = Type.String({ format: 'uuid', description: 'identifier (UUID)' });
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601, UTC' });
export const EmailAddress = Type.String({ format: 'email', maxLength: 320 });

/**
 * No C0 or C1 control character (CR, LF, TAB, ESC, NEL …): a name that reaches a mail, a header or a
 * terminal is one line of plain text. daemon/plugins/errors.ts words the 400 of this pattern.
 */
export const NO_CONTROL_CHARACTERS = '^[^\\u0000-\\u001F\\u007F-\\u009F]*$';
/** A name people give (tenant, account, project): plain text on one line. */
export const PlainName = (maxLength: number, options?: SchemaOptions) =>
  Type.String({ minLength: 1, maxLength, pattern: NO_CONTROL_CHARACTERS, ...options });

export const IdParams = Type.Object({ id: Uuid });
export type IdParams = Static<typeof IdParams>;

/** The highest page number any list accepts: (page - 1) * limit stays a valid, bounded OFFSET. */
export const MAX_PAGE = 1_000_000;
/** `page` of every paged list (spec §8); one schema, so no list can miss the bounds. */
export const PageNumber = Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 });
/** `limit` of a paged list, with that list's maximum and default. */
export function PageLimit(maxLimit = 100, defaultLimit = 20) {
  return Type.Integer({ minimum: 1, maximum: maxLimit, default: defaultLimit });
}

export function PageQuery(maxLimit = 100, defaultLimit = 20) {
  return Type.Object({
    page: Type.Optional(PageNumber),
    limit: Type.Optional(PageLimit(maxLimit, defaultLimit)),
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
/** A page of any item type (the static side of `Paged`, for generic code). */
export type PageOf<T> = { data: T[]; meta: Static<typeof PageMeta> };

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
