import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { pageLine } from '../../format.ts';
import { describeRows } from '../../records.ts';
import { listAuditEvents, tenantIdFor } from '../../services/tenant-admin.ts';
import type { PageOf } from '../../../shared/schemas/common.ts';
import type { AuditEventBody } from '../../../shared/schemas/tenants.ts';

export default class TenantsAudit extends SvcCommand<typeof TenantsAudit> {
  static override operations = ['getTenants', 'getTenantsByTenantIdAuditEvents'];
  static override summary = "The tenant's audit events, newest first (who changed what, from where).";
  static override examples = ['<%= config.bin %> tenants audit', '<%= config.bin %> tenants audit --limit 100 --json'];
  static override flags = {
    tenant: Flags.string({ description: 'tenant id or name (default: the current tenant)' }),
    page: Flags.integer({ description: 'page number', min: 1 }),
    limit: Flags.integer({ description: 'events per page (at most 100)', min: 1, max: 100 }),
  };

  async run(): Promise<PageOf<AuditEventBody>> {
    const { page, limit } = this.flags;
    const answer = await listAuditEvents(this.client, await tenantIdFor(this.client, this.flags.tenant), {
      page,
      limit,
    });
    this.log(describeRows(answer.data, ['createdAt', 'action', 'adminId', 'target', 'ip']));
    this.log(pageLine(answer.meta));
    return answer;
  }
}
