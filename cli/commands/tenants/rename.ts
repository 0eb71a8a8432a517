import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { tenantIdFor, updateTenant } from '../../services/tenant-admin.ts';
import type { TenantSummary } from '../../api-types.ts';

export default class TenantsRename extends SvcCommand<typeof TenantsRename> {
  static override operations = ['getTenants', 'patchTenantsByTenantId'];
  static override summary = 'Rename a tenant (owners and admins).';
  static override examples = ['<%= config.bin %> tenants rename "Acme Ltd"'];
  static override args = { name: Args.string({ description: 'new name', required: true }) };
  static override flags = { tenant: Flags.string({ description: 'tenant id or name (default: the current tenant)' }) };

  async run(): Promise<TenantSummary> {
    const tenantId = await tenantIdFor(this.client, this.flags.tenant);
    const tenant = await updateTenant(this.client, tenantId, { name: this.args.name });
    if (this.client.http.profile.tenantId === tenant.id) this.client.http.saveProfile({ tenantName: tenant.name });
    this.log(`Tenant ${tenant.id} is now called ${tenant.name}.`);
    return tenant;
  }
}
