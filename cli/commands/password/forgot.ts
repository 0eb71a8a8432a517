import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { forgotPassword } from '../../services/account.ts';

export default class PasswordForgot extends SvcCommand<typeof PasswordForgot> {
  static override operations = ['postAuthForgotPassword'];
  static override summary = 'Mail a password-reset link (the answer is the same whether or not the address exists).';
  static override examples = ['<%= config.bin %> password forgot --email ops@example.com --locale es'];
  static override showHeader = false;
  static override flags = {
    email: Flags.string({ description: 'the admin address', required: true }),
    locale: Flags.string({ description: 'language of the mail (en, es)' }),
  };

  async run(): Promise<{ requested: string }> {
    await forgotPassword(this.client, this.flags.email, this.flags.locale);
    this.log(
      `If ${this.flags.email} has an account, a reset link is on its way (valid 1 hour); then \`svc password reset --token …\`.`,
    );
    return { requested: this.flags.email };
  }
}
