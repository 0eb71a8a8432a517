import { SvcCommand } from '../../../base-command.ts';
import { describeRows } from '../../../records.ts';
import { contactTags } from '../../../services/contacts.ts';
import type { ContactTag } from '../../../../shared/schemas/contacts.ts';

export default class ContactTagsList extends SvcCommand<typeof ContactTagsList> {
  static override operations = ['getContactTags'];
  static override summary = 'List contact tags and how many contacts carry each.';
  static override examples = ['<%= config.bin %> contacts tags list'];

  async run(): Promise<{ data: ContactTag[] }> {
    const answer = await contactTags.list(this.client);
    this.log(describeRows(answer.data, ['name', 'contacts', 'description'], 'No tags yet.'));
    return answer;
  }
}
