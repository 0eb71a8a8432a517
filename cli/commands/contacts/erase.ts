import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { CliFailure, EXIT } from '../../errors.ts';
import { contacts } from '../../services/contacts.ts';

export default class ContactsErase extends SvcCommand<typeof ContactsErase> {
  static override operations = ['deleteContactsByIdOrExternalId'];
  static override summary = 'Erase a contact for good (a data-subject request). Asks for --yes.';
  static override examples = ['<%= config.bin %> contacts erase user-42 --yes'];
  static override args = { contact: Args.string({ description: 'contact id or externalId', required: true }) };
  static override flags = { yes: Flags.boolean({ description: 'confirm: the contact is deleted, not hidden' }) };

  async run(): Promise<{ id: string; erased: true }> {
    if (!this.flags.yes)
      throw new CliFailure(
        `Erasing ${this.args.contact} cannot be undone: run again with --yes.`,
        EXIT.usage,
        'CONFIRMATION_REQUIRED',
      );
    const answer = await contacts.erase(this.client, this.args.contact);
    this.log(`Erased contact ${answer.id}.`);
    return answer;
  }
}
