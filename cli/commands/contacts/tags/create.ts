import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../../base-command.ts';
import { contactTags } from '../../../services/contacts.ts';
import type { ContactTag } from '../../../../shared/schemas/contacts.ts';

export default class ContactTagsCreate extends SvcCommand<typeof ContactTagsCreate> {
  static override operations = ['postContactTags'];
  static override summary = 'Create a contact tag (lower-case letters, digits, _ and -).';
  static override examples = ['<%= config.bin %> contacts tags create vip --description "paying customers"'];
  static override args = { name: Args.string({ description: 'tag name', required: true }) };
  static override flags = { description: Flags.string({ description: 'what the tag means' }) };

  async run(): Promise<ContactTag> {
    const tag = await contactTags.create(this.client, this.args.name, this.flags.description);
    this.log(`Created tag ${tag.name}.`);
    return tag;
  }
}
