import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { describeRecord } from '../../records.ts';
import { contacts } from '../../services/contacts.ts';
import type { Contact } from '../../../shared/schemas/contacts.ts';

export default class ContactsShow extends SvcCommand<typeof ContactsShow> {
  static override operations = ['getContactsByIdOrExternalId'];
  static override summary = 'Show one contact, by id or externalId.';
  static override examples = ['<%= config.bin %> contacts show user-42'];
  static override args = { contact: Args.string({ description: 'contact id or externalId', required: true }) };

  async run(): Promise<Contact> {
    const contact = await contacts.show(this.client, this.args.contact);
    this.log(describeRecord(contact));
    return contact;
  }
}
