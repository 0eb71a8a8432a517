import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { CliFailure, EXIT } from '../../errors.ts';
import { deleteTenant, tenantIdFor } from '../../services/tenant-admin.ts';

export default class TenantsDelete extends SvcCommand<typeof TenantsDelete> {
  static override operations = ['getTenants', 'deleteTenantsByTenantId'];
  static override summary = 'Delete a tenant and everything in it (owners). Asks for --yes.';
  static override examples = ['<%= config.bin %> tenants delete "Old Shop" --yes'];
  static override args = {
    id: Args.string({ description: 'tenant id, or the name of one of your tenants', required: true }),
  };
  static override flags = {
    yes: Flags.boolean({ description: 'confirm: the tenant, its keys, logs and templates go' }),
  };

  async run(): Promise<{ id: string; deleted: true }> {
    if (!this.flags.yes)
      throw new CliFailure(
        `Deleting tenant ${this.args.id} cannot be undone: run again with --yes.`,
        EXIT.usage,
        'CONFIRMATION_REQUIRED',
      );
    const id = await tenantIdFor(this.client, this.args.id);
    await deleteTenant(this.client, id);
    if (this.client.http.profile.tenantId === id)
      this.client.http.saveProfile({ tenantId: undefined, tenantName: undefined });
    this.log(`Deleted tenant ${id}.`);
    return { id, deleted: true };
  }
}
