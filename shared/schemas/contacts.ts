// Contacts and contact tags: request and answer bodies shared by the daemon and the CLI.
import { Type, type Static } from '@sinclair/typebox';
import { EmailAddress, PageLimit, PageMeta, PageNumber, Timestamp, Uuid, Nullable } from './common.ts';

export const CONTACT_TAG_PATTERN = '^[a-z0-9][a-z0-9_-]{0,49}$';
export const MAX_BULK_CONTACTS = 1000;
export const MAX_CONTACT_PAGE = 500;
export const DEFAULT_CONTACT_PAGE = 50;

export const TagName = Type.String({
  pattern: CONTACT_TAG_PATTERN,
  maxLength: 50,
  description: 'lower-case letters, digits, _ and -; at most 50 characters',
});
/** BCP 47 language tag such as `en`, `es-ES` or `zh-Hant-TW`. */
export const Locale = Type.String({ pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$', maxLength: 35 });
const Name = Type.String({ maxLength: 200 });
const ExternalId = Type.String({ minLength: 1, maxLength: 255 });
const Attributes = Type.Record(Type.String(), Type.Unknown(), {
  description: 'free-form JSON attributes, available to templates',
});
const TagList = Type.Array(TagName, { maxItems: 100 });

export const UpsertContactBody = Type.Object(
  {
    email: EmailAddress,
    externalId: Type.Optional(ExternalId),
    firstName: Type.Optional(Name),
    lastName: Type.Optional(Name),
    locale: Type.Optional(Locale),
    optIn: Type.Optional(Type.Boolean()),
    tags: Type.Optional(
      Type.Array(TagName, { maxItems: 100, description: "replaces the contact's tags; unknown tags are created" }),
    ),
    attributes: Type.Optional(Attributes),
    projectId: Type.Optional(Uuid),
  },
  {
    additionalProperties: false,
    description: 'UpsertContactDto: matched by externalId, else by email. Omitted fields keep their value.',
  },
);
export type UpsertContactBody = Static<typeof UpsertContactBody>;

export const PatchContactBody = Type.Object(
  {
    email: Type.Optional(EmailAddress),
    externalId: Type.Optional(Nullable(ExternalId)),
    firstName: Type.Optional(Nullable(Name)),
    lastName: Type.Optional(Nullable(Name)),
    locale: Type.Optional(Nullable(Locale)),
    optIn: Type.Optional(Type.Boolean()),
    tags: Type.Optional(TagList),
    attributes: Type.Optional(Attributes),
    projectId: Type.Optional(Nullable(Uuid)),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description: 'PatchContactDto: only the fields sent change; null clears a field.',
  },
);
export type PatchContactBody = Static<typeof PatchContactBody>;

export const Contact = Type.Object({
  id: Uuid,
  email: Type.String(),
  externalId: Nullable(Type.String()),
  firstName: Nullable(Type.String()),
  lastName: Nullable(Type.String()),
  locale: Nullable(Type.String()),
  optIn: Type.Boolean(),
  tags: Type.Array(Type.String()),
  attributes: Attributes,
  projectId: Nullable(Uuid),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Contact = Static<typeof Contact>;

export const ContactListQuery = Type.Object(
  {
    page: Type.Optional(PageNumber),
    limit: Type.Optional(PageLimit(MAX_CONTACT_PAGE, DEFAULT_CONTACT_PAGE)),
    locale: Type.Optional(Locale),
    optIn: Type.Optional(Type.Boolean()),
    updatedSince: Type.Optional(
      Type.String({ format: 'date-time', description: 'only contacts changed at or after this time' }),
    ),
    cursor: Type.Optional(
      Type.String({ maxLength: 200, description: 'meta.nextCursor of the previous page; page is ignored when given' }),
    ),
    projectId: Type.Optional(Uuid),
    tag: Type.Optional(TagName),
  },
  { additionalProperties: false },
);
export type ContactListQuery = Static<typeof ContactListQuery>;

export const ContactPage = Type.Object({
  data: Type.Array(Contact),
  meta: Type.Composite([PageMeta, Type.Object({ nextCursor: Nullable(Type.String()) })]),
});
export type ContactPage = Static<typeof ContactPage>;

export const BulkUpsertContactsBody = Type.Object(
  {
    contacts: Type.Array(Type.Unknown({ description: 'an UpsertContactDto; each row is checked on its own' }), {
      minItems: 1,
      maxItems: MAX_BULK_CONTACTS,
    }),
  },
  { additionalProperties: false, description: 'BulkUpsertContactsDto' },
);
export type BulkUpsertContactsBody = Static<typeof BulkUpsertContactsBody>;

export const BulkRowResult = Type.Object({
  index: Type.Integer({ description: 'position of the row in the request' }),
  status: Type.Union([Type.Literal('created'), Type.Literal('updated'), Type.Literal('error')]),
  id: Type.Optional(Uuid),
  error: Type.Optional(Type.String()),
});
export type BulkRowResult = Static<typeof BulkRowResult>;

export const BulkUpsertContactsResult = Type.Object({
  created: Type.Integer(),
  updated: Type.Integer(),
  failed: Type.Integer(),
  results: Type.Array(BulkRowResult),
});
export type BulkUpsertContactsResult = Static<typeof BulkUpsertContactsResult>;

export const ContactRefParams = Type.Object({ idOrExternalId: Type.String({ minLength: 1, maxLength: 255 }) });
export const ContactTagParams = Type.Object({
  idOrExternalId: Type.String({ minLength: 1, maxLength: 255 }),
  tag: TagName,
});

export const AddTagsBody = Type.Object(
  { tags: Type.Array(TagName, { minItems: 1, maxItems: 100 }) },
  { additionalProperties: false, description: 'AddTagsDto' },
);
export type AddTagsBody = Static<typeof AddTagsBody>;

export const ContactErased = Type.Object({ id: Uuid, erased: Type.Literal(true) });

export const ContactTag = Type.Object({
  name: Type.String(),
  description: Nullable(Type.String()),
  contacts: Type.Integer({ description: 'how many contacts carry the tag' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type ContactTag = Static<typeof ContactTag>;

export const ContactTagList = Type.Object({ data: Type.Array(ContactTag) });

export const CreateContactTagBody = Type.Object(
  { name: TagName, description: Type.Optional(Type.String({ maxLength: 500 })) },
  { additionalProperties: false, description: 'CreateContactTagDto' },
);
export type CreateContactTagBody = Static<typeof CreateContactTagBody>;

export const UpdateContactTagBody = Type.Object(
  { name: Type.Optional(TagName), description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))) },
  { additionalProperties: false, minProperties: 1, description: 'UpdateContactTagDto: rename and/or describe' },
);
export type UpdateContactTagBody = Static<typeof UpdateContactTagBody>;

export const ContactTagParamsByName = Type.Object({ name: TagName });

export const ContactImportQuery = Type.Object(
  {
    map: Type.Optional(
      Type.Array(Type.String({ maxLength: 300 }), {
        maxItems: 100,
        description:
          'field=Column pairs (repeat the parameter), e.g. map=email=E-mail&map=firstName=First&map=attributes.plan=Plan; a column named like a field feeds it without a pair',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ContactImportQuery = Static<typeof ContactImportQuery>;

export const ContactImportResult = Type.Object({
  rows: Type.Integer({ description: 'data rows read (the header not counted)' }),
  created: Type.Integer(),
  updated: Type.Integer(),
  failed: Type.Integer(),
  errors: Type.Array(
    Type.Object({ line: Type.Integer({ description: 'line of the CSV where the row ends' }), error: Type.String() }),
    {
      description: 'the first 1,000 row errors',
    },
  ),
  errorsOmitted: Type.Integer({ description: 'row errors beyond those listed' }),
  aborted: Nullable(Type.String(), {
    description: 'why reading stopped before the end of the file (malformed CSV); null when the whole file was read',
  }),
});
export type ContactImportResult = Static<typeof ContactImportResult>;
