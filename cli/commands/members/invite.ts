import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { describeRecord } from '../../records.ts';
import { inviteMember, MEMBER_ROLES, tenantIdFor } from '../../services/tenant-admin.ts';
import type { InvitationBody, MemberBody } from '../../../shared/schemas/tenants.ts';

export default class MembersInvite extends SvcCommand<typeof MembersInvite> {
  static override operations = ['getTenants', 'postTenantsByTenantIdMembers'];
  static override summary = 'Add an admin to the tenant, or mail an invitation when the address has no account.';
  static override description =
    'The invitation mail links to the sign-up page; with a terminal only, `svc register --invitation <token>` joins too.';
  static override examples = [
    '<%= config.bin %> members invite grace@example.com --role developer',
    '<%= config.bin %> members invite ops@example.com --role admin --json',
  ];
  static override args = { email: Args.string({ description: 'e-mail address', required: true }) };
  static override flags = {
    role: Flags.option({ options: MEMBER_ROLES, description: 'role in the tenant', required: true })(),
    tenant: Flags.string({ description: 'tenant id or name (default: the current tenant)' }),
  };

  async run(): Promise<MemberBody | InvitationBody> {
    const answer = await inviteMember(
      this.client,
      await tenantIdFor(this.client, this.flags.tenant),
      this.args.email,
      this.flags.role,
    );
    this.log(
      'invitationId' in answer
        ? `Invitation mailed to ${answer.email} (${answer.role}); it expires ${answer.expiresAt}.`
        : `${answer.email} is now a member (${answer.role}).`,
    );
    this.log(describeRecord(answer));
    return answer;
  }
}
