import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { CliFailure, EXIT } from '../../errors.ts';
import { renderPicker } from '../../ui/render.ts';
import { pickTenant } from '../../services/tenant-admin.ts';

export default class TenantsUse extends SvcCommand<typeof TenantsUse> {
  static override operations = ['getTenants'];
  static override summary = 'Make a tenant the current one of the profile.';
  static override description =
    'Name the tenant by id or by name (case-insensitive). Without one, a picker lists your tenants (in a terminal only).';
  static override examples = [
    '<%= config.bin %> tenants use',
    '<%= config.bin %> tenants use Acme',
    '<%= config.bin %> tenants use 5b0c…-…',
  ];
  static override showHeader = false;
  static override args = {
    id: Args.string({ description: 'tenant id or name (see `svc tenants list`)' }),
  };

  async run(): Promise<{ id: string; name: string; profile: string }> {
    const http = this.client.http;
    if (http.usesApiKey)
      throw new CliFailure('With SVC_API_KEY the key decides the tenant; unset it to switch tenants.', EXIT.usage);
    let id = this.args.id;
    const tenants = await this.client.listTenants();
    if (!id) {
      if (!this.interactive)
        throw new CliFailure(
          'Pass the tenant id or name: `svc tenants use <id|name>` (see `svc tenants list`).',
          EXIT.usage,
          'MISSING_ARG',
        );
      if (tenants.length === 0)
        throw new CliFailure(
          'You are not a member of any tenant yet: run `svc tenants create --name <name>`.',
          EXIT.refused,
        );
      id = await renderPicker(
        'Choose the tenant to act in',
        tenants.map((tenant) => ({
          label: tenant.name,
          value: tenant.id,
          hint: `${tenant.id}${tenant.role ? ` · ${tenant.role}` : ''}`,
        })),
        http.tenantId,
      );
    }
    const tenant = pickTenant(tenants, id);
    http.saveProfile({ tenantId: tenant.id, tenantName: tenant.name });
    this.log(`Now acting in ${tenant.name} (${tenant.id}).`);
    return { id: tenant.id, name: tenant.name, profile: this.profileName };
  }
}
