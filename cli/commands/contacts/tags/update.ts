import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../../base-command.ts';
import { CliFailure, EXIT } from '../../../errors.ts';
import { contactTags } from '../../../services/contacts.ts';
import type { ContactTag } from '../../../../shared/schemas/contacts.ts';

export default class ContactTagsUpdate extends SvcCommand<typeof ContactTagsUpdate> {
  static override operations = ['patchContactTagsByName'];
  static override summary = 'Rename a contact tag (every contact keeps it) or change its description.';
  static override examples = [
    '<%= config.bin %> contacts tags update vip --name customers',
    '<%= config.bin %> contacts tags update vip --description ""',
  ];
  static override args = { name: Args.string({ description: 'current tag name', required: true }) };
  static override flags = {
    name: Flags.string({ description: 'new name' }),
    description: Flags.string({ description: 'new description ("" clears it)' }),
  };

  async run(): Promise<ContactTag> {
    const { name, description } = this.flags;
    if (name === undefined && description === undefined)
      throw new CliFailure('Pass --name or --description.', EXIT.usage, 'MISSING_FLAG');
    const tag = await contactTags.update(this.client, this.args.name, {
      ...(name ? { name } : {}),
      ...(description === undefined ? {} : { description: description === '' ? null : description }),
    });
    this.log(`Tag ${tag.name}: ${tag.description ?? 'no description'} (${tag.contacts} contacts).`);
    return tag;
  }
}
