import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { CliFailure, EXIT } from '../../errors.ts';
import { describeRecord } from '../../records.ts';
import { contactFields, contacts } from '../../services/contacts.ts';
import type { Contact, PatchContactBody } from '../../../shared/schemas/contacts.ts';
import { CONTACT_FLAGS } from './flags.ts';

export default class ContactsPatch extends SvcCommand<typeof ContactsPatch> {
  static override operations = ['patchContactsByIdOrExternalId'];
  static override summary = 'Change some fields of a contact; the others keep their value.';
  static override examples = [
    '<%= config.bin %> contacts patch user-42 --no-opt-in',
    '<%= config.bin %> contacts patch 7f1a… --email new@example.com',
  ];
  static override args = { contact: Args.string({ description: 'contact id or externalId', required: true }) };
  static override flags = { email: Flags.string({ description: 'new e-mail address' }), ...CONTACT_FLAGS };

  async run(): Promise<Contact> {
    const changes = contactFields(this.flags) as PatchContactBody;
    if (Object.keys(changes).length === 0)
      throw new CliFailure('Nothing to change: pass a field flag.', EXIT.usage, 'MISSING_FLAG');
    const contact = await contacts.patch(this.client, this.args.contact, changes);
    this.log(describeRecord(contact));
    return contact;
  }
}
