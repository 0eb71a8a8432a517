import { Args } from '@oclif/core';
import { SvcCommand } from '../../../base-command.ts';
import { contactTags } from '../../../services/contacts.ts';

export default class ContactTagsDelete extends SvcCommand<typeof ContactTagsDelete> {
  static override operations = ['deleteContactTagsByName'];
  static override summary = 'Delete a contact tag; contacts lose it, and are kept.';
  static override examples = ['<%= config.bin %> contacts tags delete beta'];
  static override args = { name: Args.string({ description: 'tag name', required: true }) };

  async run(): Promise<{ name: string; deleted: true }> {
    await contactTags.remove(this.client, this.args.name);
    this.log(`Deleted tag ${this.args.name}.`);
    return { name: this.args.name, deleted: true };
  }
}
