import chalk from 'chalk';
import { SvcCommand } from '../base-command.ts';
import { NoTenantError } from '../errors.ts';
import { keyValue } from '../format.ts';
import { sendingStateOf, type SendingState } from '../services/sending-state.ts';
import type { TenantSummary } from '../api-types.ts';

export interface TenantStatus {
  tenant: TenantSummary;
  /** null: sending normally. */
  sending: SendingState | null;
}

export default class Status extends SvcCommand<typeof Status> {
  static override operations = ['getTenantsByTenantId'];
  static override summary = "The current tenant's state: plan, status, and whether its sending is at risk or paused.";
  static override description =
    'A warning (bounce or complaint rates near the pause levels) and a pause both carry the numbers behind them. ' +
    'Exits 0 whatever the state: a pipeline reads `sending.level` from --json.';
  static override examples = ['<%= config.bin %> status', '<%= config.bin %> status --json'];

  async run(): Promise<TenantStatus> {
    const tenantId = this.client.http.tenantId;
    if (!tenantId) throw new NoTenantError();
    const tenant = await this.client.getTenant(tenantId);
    const sending = sendingStateOf(tenant);
    this.log(
      keyValue([
        ['tenant', `${tenant.name} (${tenant.id})`],
        ['plan', tenant.plan ?? ''],
        ['status', tenant.status ?? ''],
        ['sending', sending ? sending.level : 'ok'],
      ]),
    );
    if (sending) this.log((sending.level === 'paused' ? chalk.red : chalk.yellow)(`! ${sending.message}`));
    return { tenant, sending };
  }
}
