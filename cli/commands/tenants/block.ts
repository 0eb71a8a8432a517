import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { tenantAction, tenantIdFor } from '../../services/tenant-admin.ts';
import type { TenantSummary } from '../../api-types.ts';

export default class TenantsBlock extends SvcCommand<typeof TenantsBlock> {
  static override operations = ['getTenants', 'postTenantsByTenantIdBlock'];
  static override summary = 'Block a tenant: its requests get 403 until unblocked (platform admins).';
  static override examples = ['<%= config.bin %> tenants block "Acme Staging"'];
  static override args = { id: Args.string({ description: 'tenant id or name (default: the current tenant)' }) };

  async run(): Promise<TenantSummary> {
    const tenant = await tenantAction(this.client, await tenantIdFor(this.client, this.args.id), 'block');
    this.log(`Tenant ${tenant.name} (${tenant.id}) is blocked.`);
    return tenant;
  }
}
