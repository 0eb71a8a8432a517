// Bodies of the template endpoints (CONTRACT.md "Other bodies": templates) and send-template.
import { Type, type Static } from '@sinclair/typebox';
import { Paged, PageQuery, Timestamp, Uuid, Nullable } from './common.ts';
import { SendEmailBody } from './emails.ts';

export const TEMPLATE_EDITOR_MODES = ['html', 'react-email'] as const;
export type TemplateEditorMode = (typeof TEMPLATE_EDITOR_MODES)[number];
export const TEMPLATE_STATUSES = ['draft', 'published'] as const;
export type TemplateStatus = (typeof TEMPLATE_STATUSES)[number];

export const TemplateSlug = Type.String({
  pattern: '^[a-z0-9][a-z0-9_-]{0,99}$',
  description: 'unique per tenant: lower-case letters, digits, - and _',
});
export const Locale = Type.String({
  pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$',
  maxLength: 35,
  description: 'BCP 47 tag, e.g. en, fr, pt-BR',
});
export const TemplateTagName = Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,49}$' });
const EditorMode = Type.Union([Type.Literal('html'), Type.Literal('react-email')]);
const Status = Type.Union([Type.Literal('draft'), Type.Literal('published')], {
  description: 'published when any version is published',
});
const Subject = Type.String({ minLength: 1, maxLength: 998 });
const Body = Type.String({ maxLength: 1_000_000 });
const TemplateFrom = Type.String({
  minLength: 3,
  maxLength: 998,
  description: 'the sender of a send of this template that names none (`a@b` or `Name <a@b>`); null clears it',
});
const Jsx = Type.String({ maxLength: 200_000 });

export const CreateTemplateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    slug: TemplateSlug,
    editorMode: EditorMode,
    subject: Subject,
    htmlBody: Type.Optional(Body),
    textBody: Type.Optional(Body),
    jsx: Type.Optional(Jsx),
    projectId: Type.Optional(Uuid),
    locale: Type.Optional(Locale),
    from: Type.Optional(TemplateFrom),
  },
  {
    additionalProperties: false,
    description:
      'CreateTemplateDto: html mode needs htmlBody or textBody; react-email mode needs jsx. The first version is created with it.',
  },
);
export type CreateTemplateBody = Static<typeof CreateTemplateBody>;

export const UpdateTemplateBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    slug: Type.Optional(TemplateSlug),
    projectId: Type.Optional(Nullable(Uuid)),
    defaultLocale: Type.Optional(Locale),
    from: Type.Optional(Nullable(TemplateFrom)),
  },
  { additionalProperties: false, description: 'UpdateTemplateDto' },
);
export type UpdateTemplateBody = Static<typeof UpdateTemplateBody>;

export const UpdateVersionBody = Type.Object(
  {
    subject: Type.Optional(Subject),
    htmlBody: Type.Optional(Nullable(Body)),
    textBody: Type.Optional(Nullable(Body)),
    jsx: Type.Optional(Nullable(Jsx)),
    locale: Type.Optional(Locale),
  },
  { additionalProperties: false, description: 'UpdateVersionDto; a published version cannot be changed (409)' },
);
export type UpdateVersionBody = Static<typeof UpdateVersionBody>;

export const CreateVersionBody = Nullable(
  Type.Object({ locale: Type.Optional(Locale) }, { additionalProperties: false }),
  { description: "optional: the locale of the new version (default: the latest version's)" },
);
export type CreateVersionBody = Static<typeof CreateVersionBody>;

export const PreviewBody = Nullable(
  Type.Object({ data: Type.Optional(Type.Record(Type.String(), Type.Unknown())), locale: Type.Optional(Locale) }),
  { description: 'optional: the variables to render with' },
);
export type PreviewBody = Static<typeof PreviewBody>;

export const RenderReactEmailBody = Type.Object(
  {
    jsx: Jsx,
    props: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  {
    additionalProperties: false,
    description:
      'RenderReactEmailDto: a module whose default export is a React component; imports: react, @react-email/components',
  },
);
export type RenderReactEmailBody = Static<typeof RenderReactEmailBody>;

export const RenderedEmail = Type.Object({ html: Type.String(), text: Type.String() });
export const RenderedMessage = Type.Object({ subject: Type.String(), html: Type.String(), text: Type.String() });

export const TemplateTagView = Type.Object({ id: Uuid, name: Type.String(), createdAt: Timestamp });
export type TemplateTagView = Static<typeof TemplateTagView>;
export const CreateTemplateTagBody = Type.Object({ name: TemplateTagName }, { additionalProperties: false });

export const TemplateVersionView = Type.Object({
  id: Uuid,
  templateId: Uuid,
  version: Type.Integer(),
  locale: Type.String(),
  subject: Type.String(),
  htmlBody: Nullable(Type.String()),
  textBody: Nullable(Type.String()),
  jsx: Nullable(Type.String()),
  published: Type.Boolean(),
  publishedAt: Nullable(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type TemplateVersionView = Static<typeof TemplateVersionView>;

const TemplateFields = {
  id: Uuid,
  name: Type.String(),
  slug: Type.String(),
  editorMode: EditorMode,
  projectId: Nullable(Uuid),
  defaultLocale: Type.String(),
  from: Nullable(Type.String({ description: 'the sender of a send that names none' })),
  status: Status,
  publishedLocales: Type.Array(Type.String()),
  latestVersion: Type.Integer(),
  tags: Type.Array(TemplateTagView),
  createdAt: Timestamp,
  updatedAt: Timestamp,
};
export const TemplateSummary = Type.Object(TemplateFields);
export type TemplateSummary = Static<typeof TemplateSummary>;
export const TemplateDetail = Type.Object({ ...TemplateFields, versions: Type.Array(TemplateVersionView) });
export type TemplateDetail = Static<typeof TemplateDetail>;

export const TemplateListQuery = Type.Intersect([
  PageQuery(),
  Type.Object({
    search: Type.Optional(Type.String({ maxLength: 200, description: 'part of the name or slug' })),
    projectId: Type.Optional(Uuid),
    status: Type.Optional(Status),
    editorMode: Type.Optional(EditorMode),
  }),
]);
export type TemplateListQuery = Static<typeof TemplateListQuery>;
export const TemplatePage = Paged(TemplateSummary);

export const TemplateIdParams = Type.Object({ id: Uuid });
export const VersionParams = Type.Object({ id: Uuid, versionId: Uuid });
export const TagParams = Type.Object({ tagId: Uuid });
export const TemplateTagParams = Type.Object({ id: Uuid, tagId: Uuid });

const SendFields = Type.Omit(SendEmailBody, [
  'from',
  'subject',
  'htmlBody',
  'textBody',
  'templateVersionId',
]).properties;
export const SendTemplateBody = Type.Object(
  {
    slug: TemplateSlug,
    ...SendFields,
    from: Type.Optional(SendEmailBody.properties.from),
  },
  {
    additionalProperties: false,
    description:
      "SendTemplateDto: the published version of `slug` for `locale` (falling back to the language, then the template's default locale); from defaults to the template's own (its `from`), one of them is required",
  },
);
export type SendTemplateBody = Static<typeof SendTemplateBody>;
