import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { resendVerification, verifyEmail } from '../../services/account.ts';

export default class VerifyEmail extends SvcCommand<typeof VerifyEmail> {
  static override operations = ['postAuthVerifyEmail', 'postAuthResendVerification', 'postAuthResendVerificationEmail'];
  static override summary =
    "Verify the admin's e-mail address with the token of the verification mail, or mail it again.";
  static override examples = [
    '<%= config.bin %> verify-email --token 4be0…',
    '<%= config.bin %> verify-email --resend',
    '<%= config.bin %> verify-email --resend --email ops@example.com',
  ];
  static override showHeader = false;
  static override flags = {
    token: Flags.string({ description: 'the token of the link in the verification mail', exclusive: ['resend'] }),
    resend: Flags.boolean({ description: 'mail the verification link again (signed in, or with --email)' }),
    email: Flags.string({ description: 'with --resend when not signed in: the address', dependsOn: ['resend'] }),
  };

  async run(): Promise<{ verified: boolean; resent: boolean }> {
    if (this.flags.resend) {
      await resendVerification(this.client, this.flags.email);
      this.log('A new verification link is on its way (if the address still needs one).');
      return { verified: false, resent: true };
    }
    const token = this.requireInput(this.flags.token, '--token', 'the token of the verification link');
    await verifyEmail(this.client, token);
    this.log('E-mail address verified.');
    return { verified: true, resent: false };
  }
}
