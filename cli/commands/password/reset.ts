import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { readPasswords, resetPassword } from '../../services/account.ts';

export default class PasswordReset extends SvcCommand<typeof PasswordReset> {
  static override operations = ['postAuthResetPassword'];
  static override summary = 'Set a new password with the token of a reset mail (single use, 1 hour).';
  static override examples = [
    '<%= config.bin %> password reset --token 9c1f…',
    'printf %s "$NEW" | <%= config.bin %> password reset --token "$TOKEN" --password-stdin',
  ];
  static override showHeader = false;
  static override flags = {
    token: Flags.string({ description: 'the token of the reset link (…/reset-password?token=…)', required: true }),
    'password-stdin': Flags.boolean({ description: 'read the new password from stdin' }),
  };

  async run(): Promise<{ ok: true }> {
    const [next] = await readPasswords(this.flags['password-stdin'], [
      { title: 'the new password (at least 10 characters)', isNew: true },
    ]);
    const answer = await resetPassword(this.client, this.flags.token, next);
    this.log('Password set: sign in with `svc login`.');
    return answer;
  }
}
