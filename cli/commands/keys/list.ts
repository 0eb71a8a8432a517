import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { pageLine, shortDate, table } from '../../format.ts';
import type { ApiKeySummary, Page } from '../../api-types.ts';

export default class KeysList extends SvcCommand<typeof KeysList> {
  static override operations = ['getTenantsByTenantIdApiKeys'];
  static override summary = 'List the API keys of the current tenant (the secret part is never shown again).';
  static override examples = ['<%= config.bin %> keys list', '<%= config.bin %> keys list --json'];
  static override flags = {
    page: Flags.integer({ description: 'page number', min: 1 }),
    limit: Flags.integer({ description: 'keys per page (max 100)', min: 1, max: 100 }),
  };

  async run(): Promise<Page<ApiKeySummary>> {
    const page = await this.client.listApiKeys({ page: this.flags.page, limit: this.flags.limit });
    this.log(
      table(
        page.data,
        [
          { header: 'ID', value: (k) => k.id },
          { header: 'NAME', value: (k) => k.name },
          { header: 'PREFIX', value: (k) => k.prefix },
          { header: 'ENV', value: (k) => k.environment },
          { header: 'SCOPES', value: (k) => k.scopes.join(',') },
          { header: 'CREATED', value: (k) => shortDate(k.createdAt) },
          { header: 'LAST USED', value: (k) => shortDate(k.lastUsedAt) },
        ],
        'No API keys yet: create one with `svc keys create --name <name>`.',
      ),
    );
    this.log(pageLine(page.meta));
    return page;
  }
}
