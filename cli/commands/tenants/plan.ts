import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { CliFailure, EXIT } from '../../errors.ts';
import { describeRecord } from '../../records.ts';
import { tenantIdFor, updateTenant } from '../../services/tenant-admin.ts';
import type { TenantSummary } from '../../api-types.ts';
import type { UpdateTenantBody } from '../../../shared/schemas/tenants.ts';

export default class TenantsPlan extends SvcCommand<typeof TenantsPlan> {
  static override operations = ['getTenants', 'patchTenantsByTenantId'];
  static override summary = "Set a tenant's plan and/or monthly limit override (platform admins).";
  static override examples = [
    '<%= config.bin %> tenants plan pro --tenant "Acme Staging"',
    '<%= config.bin %> tenants plan --monthly-limit 250000',
    '<%= config.bin %> tenants plan --monthly-limit none',
  ];
  static override args = { plan: Args.string({ description: 'plan slug (see `svc billing plans`)' }) };
  static override flags = {
    tenant: Flags.string({ description: 'tenant id or name (default: the current tenant)' }),
    'monthly-limit': Flags.string({ description: 'e-mails a month instead of the plan\'s, or "none" to clear it' }),
  };

  async run(): Promise<TenantSummary> {
    const changes: UpdateTenantBody = {};
    if (this.args.plan) changes.plan = this.args.plan as UpdateTenantBody['plan'];
    const limit = this.flags['monthly-limit'];
    if (limit !== undefined) {
      if (limit !== 'none' && !/^\d+$/.test(limit))
        throw new CliFailure('--monthly-limit takes a whole number or "none".', EXIT.usage, 'BAD_FLAG');
      changes.monthlyLimit = limit === 'none' ? null : Number(limit);
    }
    if (Object.keys(changes).length === 0)
      throw new CliFailure('Name a plan, or pass --monthly-limit.', EXIT.usage, 'MISSING_FLAG');
    const tenant = await updateTenant(this.client, await tenantIdFor(this.client, this.flags.tenant), changes);
    this.log(describeRecord(tenant, ['id', 'name', 'plan', 'monthlyLimit', 'status']));
    return tenant;
  }
}
