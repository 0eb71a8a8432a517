import { Args } from '@oclif/core';
import chalk from 'chalk';
import { SvcCommand } from '../../base-command.ts';
import type { CreatedApiKey } from '../../api-types.ts';

export default class KeysRotate extends SvcCommand<typeof KeysRotate> {
  static override operations = ['postTenantsByTenantIdApiKeysByApiKeyIdRotate'];
  static override summary = 'Replace an API key with a new secret; the old secret stops working.';
  static override examples = [
    '<%= config.bin %> keys rotate 3f2a…',
    '<%= config.bin %> keys rotate 3f2a… --json | jq -r .key',
  ];
  static override args = { id: Args.string({ description: 'API key id (see `svc keys list`)', required: true }) };

  async run(): Promise<CreatedApiKey> {
    const rotated = await this.client.rotateApiKey(this.args.id);
    this.log(`Rotated ${rotated.name} (${rotated.id}). New key:\n\n${chalk.bold(rotated.key)}\n`);
    this.log(chalk.yellow('This is the only time the key is shown: store it now.'));
    return rotated;
  }
}
