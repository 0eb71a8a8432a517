import chalk from 'chalk';
import { SvcCommand } from '../../base-command.ts';
import { table } from '../../format.ts';
import type { TenantSummary } from '../../api-types.ts';
import { sendingStateOf } from '../../services/sending-state.ts';

export interface TenantRow extends TenantSummary {
  current: boolean;
}

export default class TenantsList extends SvcCommand<typeof TenantsList> {
  static override operations = ['getTenants'];
  static override summary = 'List the tenants you are a member of; the current one is marked.';
  static override examples = ['<%= config.bin %> tenants list', '<%= config.bin %> tenants list --json'];

  async run(): Promise<{ tenants: TenantRow[] }> {
    const currentId = this.client.http.tenantId;
    const tenants = (await this.client.listTenants()).map((tenant) => ({
      ...tenant,
      current: tenant.id === currentId,
    }));
    this.log(
      table(
        tenants,
        [
          { header: '', value: (t) => (t.current ? chalk.green('●') : ' ') },
          { header: 'ID', value: (t) => t.id },
          { header: 'NAME', value: (t) => t.name },
          { header: 'ROLE', value: (t) => t.role ?? '' },
          { header: 'PLAN', value: (t) => t.plan ?? '' },
          { header: 'STATUS', value: (t) => t.status ?? '' },
          { header: 'SENDING', value: (t) => sendingStateOf(t)?.level ?? 'ok' },
        ],
        'You are not a member of any tenant yet: create one with `svc tenants create --name <name>`.',
      ),
    );
    // The reasons carry the numbers behind a warning or a pause: one line per tenant concerned.
    for (const tenant of tenants) {
      const state = sendingStateOf(tenant);
      if (state) this.log((state.level === 'paused' ? chalk.red : chalk.yellow)(`! ${tenant.name}: ${state.message}`));
    }
    return { tenants };
  }
}
