import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { changePassword, readPasswords } from '../../services/account.ts';

export default class PasswordChange extends SvcCommand<typeof PasswordChange> {
  static override operations = ['postAuthChangePassword'];
  static override summary = "Change the signed-in admin's password; every other session is signed out.";
  static override examples = [
    '<%= config.bin %> password change',
    'printf "%s\\n%s\\n" "$OLD" "$NEW" | <%= config.bin %> password change --password-stdin',
  ];
  static override showHeader = false;
  static override flags = {
    'password-stdin': Flags.boolean({
      description: 'read the current password, then the new one, one per line of stdin',
    }),
  };

  async run(): Promise<{ ok: true; revokedSessions: number }> {
    const [current, next] = await readPasswords(this.flags['password-stdin'], [
      { title: 'the current password', isNew: false },
      { title: 'the new password (at least 10 characters)', isNew: true },
    ]);
    const answer = await changePassword(this.client, current, next);
    this.log(`Password changed; ${answer.revokedSessions} other session(s) signed out.`);
    return answer;
  }
}
