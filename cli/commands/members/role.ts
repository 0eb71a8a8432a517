import { Args } from '@oclif/core';
import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { changeMemberRole, MEMBER_ROLES, resolveMember, tenantIdFor } from '../../services/tenant-admin.ts';
import type { MemberBody } from '../../../shared/schemas/tenants.ts';

export default class MembersRole extends SvcCommand<typeof MembersRole> {
  static override operations = [
    'getTenants',
    'getTenantsByTenantIdMembers',
    'patchTenantsByTenantIdMembersByTargetAdminIdRole',
  ];
  static override summary = "Change a member's role (the last owner cannot be demoted).";
  static override examples = ['<%= config.bin %> members role ada@example.com admin'];
  static override args = {
    member: Args.string({ description: 'e-mail address or admin id', required: true }),
    role: Args.string({ description: 'new role', required: true, options: [...MEMBER_ROLES] }),
  };
  static override flags = { tenant: Flags.string({ description: 'tenant id or name (default: the current tenant)' }) };

  async run(): Promise<MemberBody> {
    const tenantId = await tenantIdFor(this.client, this.flags.tenant);
    const member = await resolveMember(this.client, tenantId, this.args.member);
    const role = this.args.role as MemberBody['role'];
    const answer = await changeMemberRole(this.client, tenantId, member.adminId, role);
    this.log(`${answer.email} is now ${answer.role}.`);
    return answer;
  }
}
