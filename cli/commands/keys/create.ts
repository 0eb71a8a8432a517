import { Flags } from '@oclif/core';
import chalk from 'chalk';
import { SvcCommand } from '../../base-command.ts';
import { keyValue } from '../../format.ts';
import { API_KEY_SCOPES } from '../../../shared/constants.ts';
import type { CreatedApiKey } from '../../api-types.ts';

export default class KeysCreate extends SvcCommand<typeof KeysCreate> {
  static override operations = ['postTenantsByTenantIdApiKeys'];
  static override summary = 'Create an API key; its secret is printed once, store it now.';
  static override examples = [
    '<%= config.bin %> keys create --name ci --scope email:send --scope email:read',
    '<%= config.bin %> keys create --name tests --environment test --json',
  ];
  static override flags = {
    name: Flags.string({ description: 'what the key is for', required: true }),
    scope: Flags.option({
      options: API_KEY_SCOPES,
      multiple: true,
      description: 'scope to grant (repeat); default: every scope',
    })(),
    environment: Flags.option({
      options: ['live', 'test'] as const,
      default: 'live' as const,
      description: 'test keys capture mail instead of sending it',
    })(),
  };

  async run(): Promise<CreatedApiKey> {
    const created = await this.client.createApiKey({
      name: this.flags.name,
      scopes: this.flags.scope ?? [...API_KEY_SCOPES],
      environment: this.flags.environment,
    });
    this.log(
      keyValue([
        ['id', created.id],
        ['name', created.name],
        ['scopes', created.scopes.join(', ')],
        ['environment', created.environment],
      ]),
    );
    this.log(
      `\n${chalk.bold(created.key)}\n${chalk.yellow('This is the only time the key is shown: store it in your secret manager now.')}`,
    );
    return created;
  }
}
