// Contacts and contact tags: the calls behind `svc contacts …` and `svc contacts tags …`. A contact is named
// by its id or its externalId, as the API takes either.
import type { SvcClient } from '../client.ts';
import type {
  BulkUpsertContactsResult,
  Contact,
  ContactListQuery,
  ContactPage,
  ContactTag,
  PatchContactBody,
  UpsertContactBody,
} from '../../shared/schemas/contacts.ts';
import { CliFailure, EXIT } from '../errors.ts';

const contactPath = (ref: string, suffix = '') => `/contacts/${encodeURIComponent(ref)}${suffix}`;

export const contacts = {
  list: (client: SvcClient, query: ContactListQuery) =>
    client.http.request<ContactPage>('GET', '/contacts', { query: { ...query } }),
  show: (client: SvcClient, ref: string) => client.http.request<Contact>('GET', contactPath(ref)),
  bulk: (client: SvcClient, rows: unknown[]) =>
    client.http.request<BulkUpsertContactsResult>('POST', '/contacts/bulk', { json: { contacts: rows } }),
  upsert: (client: SvcClient, body: UpsertContactBody) =>
    client.http.request<Contact>('PUT', '/contacts', { json: body }),
  patch: (client: SvcClient, ref: string, body: PatchContactBody) =>
    client.http.request<Contact>('PATCH', contactPath(ref), { json: body }),
  erase: (client: SvcClient, ref: string) =>
    client.http.request<{ id: string; erased: true }>('DELETE', contactPath(ref)),
  addTags: (client: SvcClient, ref: string, tags: string[]) =>
    client.http.request<Contact>('POST', contactPath(ref, '/tags'), { json: { tags } }),
  removeTag: (client: SvcClient, ref: string, tag: string) =>
    client.http.request<unknown>('DELETE', contactPath(ref, `/tags/${encodeURIComponent(tag)}`)),
};

const tagPath = (name?: string) => (name ? `/contact-tags/${encodeURIComponent(name)}` : '/contact-tags');

export const contactTags = {
  list: (client: SvcClient) => client.http.request<{ data: ContactTag[] }>('GET', tagPath()),
  create: (client: SvcClient, name: string, description?: string) =>
    client.http.request<ContactTag>('POST', tagPath(), { json: { name, ...(description ? { description } : {}) } }),
  update: (client: SvcClient, name: string, changes: { name?: string; description?: string | null }) =>
    client.http.request<ContactTag>('PATCH', tagPath(name), { json: changes }),
  remove: (client: SvcClient, name: string) => client.http.request<unknown>('DELETE', tagPath(name)),
};

/** The contact fields the upsert and patch commands take as flags; --attributes is JSON. */
export interface ContactFlags {
  email?: string;
  'external-id'?: string;
  'first-name'?: string;
  'last-name'?: string;
  locale?: string;
  'opt-in'?: boolean;
  tag?: string[];
  attributes?: string;
  project?: string;
}

export function contactFields(flags: ContactFlags): Record<string, unknown> {
  let attributes: unknown;
  if (flags.attributes !== undefined) {
    try {
      attributes = JSON.parse(flags.attributes);
    } catch {
      throw new CliFailure('--attributes takes a JSON object.', EXIT.usage, 'BAD_FLAG');
    }
  }
  const fields: Record<string, unknown> = {
    email: flags.email,
    externalId: flags['external-id'],
    firstName: flags['first-name'],
    lastName: flags['last-name'],
    locale: flags.locale,
    optIn: flags['opt-in'],
    tags: flags.tag,
    attributes,
    projectId: flags.project,
  };
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}
