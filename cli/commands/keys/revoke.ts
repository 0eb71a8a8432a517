import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';

export default class KeysRevoke extends SvcCommand<typeof KeysRevoke> {
  static override operations = ['deleteTenantsByTenantIdApiKeysByApiKeyId'];
  static override summary = 'Revoke an API key: requests made with it are refused from now on.';
  static override examples = ['<%= config.bin %> keys revoke 3f2a…'];
  static override args = { id: Args.string({ description: 'API key id (see `svc keys list`)', required: true }) };

  async run(): Promise<{ id: string; revoked: true }> {
    await this.client.revokeApiKey(this.args.id);
    this.log(`Revoked API key ${this.args.id}.`);
    return { id: this.args.id, revoked: true };
  }
}
