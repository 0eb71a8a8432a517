import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { describeRows } from '../../records.ts';
import { contacts } from '../../services/contacts.ts';
import type { ContactPage } from '../../../shared/schemas/contacts.ts';

export default class ContactsList extends SvcCommand<typeof ContactsList> {
  static override operations = ['getContacts'];
  static override summary = 'List contacts, filtered by tag, locale, opt-in, project or change time.';
  static override examples = [
    '<%= config.bin %> contacts list --tag vip --opt-in',
    '<%= config.bin %> contacts list --updated-since 2026-01-01T00:00:00Z --limit 500 --json',
    '<%= config.bin %> contacts list --cursor "$NEXT" --json',
  ];
  static override flags = {
    tag: Flags.string({ description: 'only contacts with this tag' }),
    locale: Flags.string({ description: 'only this locale' }),
    'opt-in': Flags.boolean({ allowNo: true, description: 'only opted-in (--no-opt-in: only opted-out) contacts' }),
    project: Flags.string({ description: 'only this project id' }),
    'updated-since': Flags.string({ description: 'only contacts changed at or after this ISO 8601 time' }),
    cursor: Flags.string({ description: 'meta.nextCursor of the previous page' }),
    page: Flags.integer({ description: 'page number', min: 1 }),
    limit: Flags.integer({ description: 'contacts per page', min: 1 }),
  };

  async run(): Promise<ContactPage> {
    const f = this.flags;
    const page = await contacts.list(this.client, {
      tag: f.tag,
      locale: f.locale,
      optIn: f['opt-in'],
      projectId: f.project,
      updatedSince: f['updated-since'],
      cursor: f.cursor,
      page: f.page,
      limit: f.limit,
    });
    this.log(describeRows(page.data, ['id', 'email', 'externalId', 'locale', 'optIn', 'tags'], 'No contacts.'));
    if (page.meta.nextCursor) this.log(`next page: --cursor ${page.meta.nextCursor}`);
    return page;
  }
}
