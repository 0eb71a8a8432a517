import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { tenantAction, tenantIdFor } from '../../services/tenant-admin.ts';
import type { TenantSummary } from '../../api-types.ts';

export default class TenantsUnblock extends SvcCommand<typeof TenantsUnblock> {
  static override operations = ['getTenants', 'postTenantsByTenantIdUnblock'];
  static override summary = 'Unblock a tenant (platform admins).';
  static override examples = ['<%= config.bin %> tenants unblock "Acme Staging"'];
  static override args = { id: Args.string({ description: 'tenant id or name (default: the current tenant)' }) };

  async run(): Promise<TenantSummary> {
    const tenant = await tenantAction(this.client, await tenantIdFor(this.client, this.args.id), 'unblock');
    this.log(`Tenant ${tenant.name} (${tenant.id}) is active again.`);
    return tenant;
  }
}
