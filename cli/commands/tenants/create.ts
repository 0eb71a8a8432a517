import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { keyValue } from '../../format.ts';
import type { TenantSummary } from '../../api-types.ts';

export default class TenantsCreate extends SvcCommand<typeof TenantsCreate> {
  static override summary = 'Create a tenant (you become its owner) and make it current.';
  static override examples = ['<%= config.bin %> tenants create --name "Acme"', '<%= config.bin %> tenants create --name Staging --no-use --json'];
  static override flags = {
    name: Flags.string({ description: 'tenant name', required: true }),
    use: Flags.boolean({ description: 'make the new tenant current', default: true, allowNo: true }),
  };

  async run(): Promise<TenantSummary & { current: boolean }> {
    const tenant = await this.client.createTenant(this.flags.name);
    if (this.flags.use) this.client.http.saveProfile({ tenantId: tenant.id, tenantName: tenant.name });
    this.log(keyValue([['id', tenant.id], ['name', tenant.name], ['plan', tenant.plan], ['current', this.flags.use ? 'yes' : 'no']]));
    return { ...tenant, current: this.flags.use };
  }
}
