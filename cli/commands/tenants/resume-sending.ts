import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { tenantAction, tenantIdFor } from '../../services/tenant-admin.ts';
import type { TenantSummary } from '../../api-types.ts';

export default class TenantsResumeSending extends SvcCommand<typeof TenantsResumeSending> {
  static override operations = ['getTenants', 'postTenantsByTenantIdResumeSending'];
  static override summary = 'Lift the automatic sending pause (bounce or complaint rate) of a tenant.';
  static override examples = ['<%= config.bin %> tenants resume-sending "Acme Staging"'];
  static override args = { id: Args.string({ description: 'tenant id or name (default: the current tenant)' }) };

  async run(): Promise<TenantSummary> {
    const tenant = await tenantAction(this.client, await tenantIdFor(this.client, this.args.id), 'resume-sending');
    this.log(`Tenant ${tenant.name} (${tenant.id}) may send again.`);
    return tenant;
  }
}
