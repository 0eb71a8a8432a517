// Contacts and contact tags (spec §4 "Contacts"): API key with contacts:read / contacts:write, or JWT.
import type { App, AppDeps } from '../../app-types.ts';
import { access } from '../../access.ts';
import { tenantOf } from '../../access.ts';
import { ErrorBody, OkBody } from '../../../shared/schemas/common.ts';
import {
  AddTagsBody,
  BulkUpsertContactsBody,
  BulkUpsertContactsResult,
  Contact,
  ContactErased,
  ContactImportQuery,
  ContactImportResult,
  ContactListQuery,
  ContactPage,
  ContactRefParams,
  ContactTag,
  ContactTagList,
  ContactTagParams,
  ContactTagParamsByName,
  CreateContactTagBody,
  PatchContactBody,
  UpdateContactTagBody,
  UpsertContactBody,
  MAX_BULK_CONTACTS,
} from '../../../shared/schemas/contacts.ts';
import {
  addContactTags,
  eraseContact,
  getContact,
  listContacts,
  patchContact,
  removeContactTag,
  upsertContact,
} from './service.ts';
import { Readable } from 'node:stream';
import { ApiError } from '../../errors.ts';
import { bulkUpsertContacts } from './bulk.ts';
import { importContactsCsv } from './import.ts';
import { createContactTag, deleteContactTag, listContactTags, updateContactTag } from './tags-service.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody };
const notFound = { ...errors, 404: ErrorBody };

export default async function contactRoutes(app: App, deps: AppDeps): Promise<void> {
  const tags = ['contacts'];
  const read = { access: access.keyOrSession('contacts:read') };
  const write = { access: access.keyOrSession('contacts:write') };

  app.put(
    '/contacts',
    {
      config: write,
      schema: {
        tags,
        summary: 'Create or update a contact, matched by externalId, else by email',
        body: UpsertContactBody,
        response: { 200: Contact, ...errors, 409: ErrorBody },
      },
    },
    async (request) => (await upsertContact(deps, tenantOf(request), request.body)).contact,
  );

  app.get(
    '/contacts',
    {
      config: read,
      schema: {
        tags,
        summary: 'List contacts, oldest change first; page with page/limit or walk with cursor',
        querystring: ContactListQuery,
        response: { 200: ContactPage, ...errors },
      },
    },
    async (request) => listContacts(deps, tenantOf(request), request.query),
  );

  app.post(
    '/contacts/bulk',
    {
      // 1000 contacts of about a kilobyte, with their tags and attributes: 25 members each on average.
      config: { ...write, maxJsonMembers: MAX_BULK_CONTACTS * 25 },
      bodyLimit: 1024 * 1024,
      schema: {
        tags,
        summary: 'Upsert up to 1000 contacts; each row answers created, updated or error',
        body: BulkUpsertContactsBody,
        response: { 200: BulkUpsertContactsResult, ...errors },
      },
    },
    async (request) => bulkUpsertContacts(deps, tenantOf(request), { rows: request.body.contacts }),
  );

  // The CSV body is handed over unread: importContactsCsv parses it as it arrives (no body limit,
  // since the whole point is a file of any size; the rows are written as they come).
  app.addContentTypeParser('text/csv', (_request, payload, done) => done(null, payload));
  app.post(
    '/contacts/import',
    {
      config: write,
      schema: {
        tags,
        summary:
          'Import contacts from a CSV body (Content-Type: text/csv), streamed: header row, one contact per row; bad rows are reported by line and skipped',
        querystring: ContactImportQuery,
        response: { 200: ContactImportResult, ...errors, 415: ErrorBody },
      },
    },
    async (request) => {
      if (!(request.body instanceof Readable))
        throw new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Send the file as the body with Content-Type: text/csv.');
      return importContactsCsv(deps, tenantOf(request), { csv: request.body, map: request.query.map ?? [] });
    },
  );

  app.get(
    '/contacts/:idOrExternalId',
    {
      config: read,
      schema: {
        tags,
        summary: 'One contact by id or externalId',
        params: ContactRefParams,
        response: { 200: Contact, ...notFound },
      },
    },
    async (request) => getContact(deps, tenantOf(request), { ref: request.params.idOrExternalId }),
  );

  app.patch(
    '/contacts/:idOrExternalId',
    {
      config: write,
      schema: {
        tags,
        summary: 'Change some fields of a contact (by id, or by externalId)',
        params: ContactRefParams,
        body: PatchContactBody,
        response: { 200: Contact, ...notFound, 409: ErrorBody },
      },
    },
    async (request) =>
      patchContact(deps, tenantOf(request), { ref: request.params.idOrExternalId, body: request.body }),
  );

  app.post(
    '/contacts/:idOrExternalId/tags',
    {
      config: write,
      schema: {
        tags,
        summary: 'Add tags to a contact (unknown tags are created)',
        params: ContactRefParams,
        body: AddTagsBody,
        response: { 200: Contact, ...notFound },
      },
    },
    async (request) =>
      addContactTags(deps, tenantOf(request), { ref: request.params.idOrExternalId, tags: request.body.tags }),
  );

  app.delete(
    '/contacts/:idOrExternalId/tags/:tag',
    {
      config: write,
      schema: {
        tags,
        summary: 'Remove a tag from a contact',
        params: ContactTagParams,
        response: { 200: Contact, ...notFound },
      },
    },
    async (request) =>
      removeContactTag(deps, tenantOf(request), { ref: request.params.idOrExternalId, tag: request.params.tag }),
  );

  app.delete(
    '/contacts/:idOrExternalId',
    {
      config: write,
      schema: {
        tags,
        summary: 'Erase a contact (GDPR): the row and its tag links are deleted',
        params: ContactRefParams,
        response: { 200: ContactErased, ...notFound },
      },
    },
    async (request) => eraseContact(deps, tenantOf(request), { ref: request.params.idOrExternalId }),
  );

  const tagTags = ['contact-tags'];
  app.get(
    '/contact-tags',
    {
      config: read,
      schema: {
        tags: tagTags,
        summary: "The tenant's contact tags with their contact counts",
        response: { 200: ContactTagList, ...errors },
      },
    },
    async (request) => listContactTags(deps, tenantOf(request)),
  );

  app.post(
    '/contact-tags',
    {
      config: write,
      schema: {
        tags: tagTags,
        summary: 'Create a contact tag',
        body: CreateContactTagBody,
        response: { 201: ContactTag, ...errors, 409: ErrorBody },
      },
    },
    async (request, reply) => reply.code(201).send(await createContactTag(deps, tenantOf(request), request.body)),
  );

  app.patch(
    '/contact-tags/:name',
    {
      config: write,
      schema: {
        tags: tagTags,
        summary: 'Rename or describe a contact tag',
        params: ContactTagParamsByName,
        body: UpdateContactTagBody,
        response: { 200: ContactTag, ...notFound, 409: ErrorBody },
      },
    },
    async (request) => updateContactTag(deps, tenantOf(request), { name: request.params.name, body: request.body }),
  );

  app.delete(
    '/contact-tags/:name',
    {
      config: write,
      schema: {
        tags: tagTags,
        summary: 'Delete a contact tag and detach it from every contact',
        params: ContactTagParamsByName,
        response: { 200: OkBody, ...notFound },
      },
    },
    async (request) => deleteContactTag(deps, tenantOf(request), { name: request.params.name }),
  );
}
