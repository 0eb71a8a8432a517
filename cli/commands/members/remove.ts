import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { removeMember, resolveMember, tenantIdFor } from '../../services/tenant-admin.ts';

export default class MembersRemove extends SvcCommand<typeof MembersRemove> {
  static override operations = [
    'getTenants',
    'getTenantsByTenantIdMembers',
    'deleteTenantsByTenantIdMembersByTargetAdminId',
  ];
  static override summary = 'Remove a member from the tenant (the last owner cannot be removed).';
  static override examples = ['<%= config.bin %> members remove ada@example.com'];
  static override args = { member: Args.string({ description: 'e-mail address or admin id', required: true }) };
  static override flags = { tenant: Flags.string({ description: 'tenant id or name (default: the current tenant)' }) };

  async run(): Promise<{ removed: string; adminId: string }> {
    const tenantId = await tenantIdFor(this.client, this.flags.tenant);
    const member = await resolveMember(this.client, tenantId, this.args.member);
    await removeMember(this.client, tenantId, member.adminId);
    this.log(`${member.email} is no longer a member.`);
    return { removed: member.email, adminId: member.adminId };
  }
}
