import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { describeRecord } from '../../records.ts';
import { contactFields, contacts } from '../../services/contacts.ts';
import type { Contact, UpsertContactBody } from '../../../shared/schemas/contacts.ts';
import { CONTACT_FLAGS } from './flags.ts';

export default class ContactsUpsert extends SvcCommand<typeof ContactsUpsert> {
  static override operations = ['putContacts'];
  static override summary = 'Create or update a contact (matched by --external-id, else by address).';
  static override examples = [
    '<%= config.bin %> contacts upsert ada@example.com --first-name Ada --locale es --opt-in --tag vip',
    '<%= config.bin %> contacts upsert ada@example.com --external-id user-42 --attributes \'{"plan":"pro"}\' --json',
  ];
  static override args = { email: Args.string({ description: 'e-mail address', required: true }) };
  static override flags = CONTACT_FLAGS;

  async run(): Promise<Contact> {
    const body = { ...contactFields(this.flags), email: this.args.email } as UpsertContactBody;
    const contact = await contacts.upsert(this.client, body);
    this.log(describeRecord(contact));
    return contact;
  }
}
