import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { CliFailure, EXIT } from '../../errors.ts';
import { contacts } from '../../services/contacts.ts';
import type { Contact } from '../../../shared/schemas/contacts.ts';

export default class ContactsTag extends SvcCommand<typeof ContactsTag> {
  static override operations = [
    'postContactsByIdOrExternalIdTags',
    'deleteContactsByIdOrExternalIdTagsByTag',
    'getContactsByIdOrExternalId',
  ];
  static override summary = 'Add tags to a contact, or take them off with --remove.';
  static override examples = [
    '<%= config.bin %> contacts tag user-42 vip beta',
    '<%= config.bin %> contacts tag user-42 beta --remove',
  ];
  static override strict = false;
  static override args = { contact: Args.string({ description: 'contact id or externalId', required: true }) };
  static override flags = { remove: Flags.boolean({ description: 'take the tags off instead' }) };

  async run(): Promise<Contact> {
    const tags = this.positionals.slice(1);
    if (tags.length === 0) throw new CliFailure('Name at least one tag after the contact.', EXIT.usage, 'MISSING_FLAG');
    const ref = this.args.contact;
    if (!this.flags.remove) {
      const contact = await contacts.addTags(this.client, ref, tags);
      this.log(`${contact.email}: ${contact.tags.join(', ')}`);
      return contact;
    }
    for (const tag of tags) await contacts.removeTag(this.client, ref, tag);
    const contact = await contacts.show(this.client, ref);
    this.log(`${contact.email}: ${contact.tags.join(', ') || 'no tags'}`);
    return contact;
  }
}
