import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { pageLine } from '../../format.ts';
import { describeRows } from '../../records.ts';
import { listMembers, tenantIdFor } from '../../services/tenant-admin.ts';
import type { PageOf } from '../../../shared/schemas/common.ts';
import type { MemberBody } from '../../../shared/schemas/tenants.ts';

export default class MembersList extends SvcCommand<typeof MembersList> {
  static override operations = ['getTenants', 'getTenantsByTenantIdMembers'];
  static override summary = 'List the members of the current tenant and their roles.';
  static override examples = ['<%= config.bin %> members list', '<%= config.bin %> members list --json'];
  static override flags = {
    tenant: Flags.string({ description: 'tenant id or name (default: the current tenant)' }),
    page: Flags.integer({ description: 'page number', min: 1 }),
    limit: Flags.integer({ description: 'members per page (at most 100)', min: 1, max: 100 }),
  };

  async run(): Promise<PageOf<MemberBody>> {
    const { page, limit } = this.flags;
    const answer = await listMembers(this.client, await tenantIdFor(this.client, this.flags.tenant), { page, limit });
    this.log(describeRows(answer.data, ['adminId', 'email', 'name', 'role', 'createdAt']));
    this.log(pageLine(answer.meta));
    return answer;
  }
}
