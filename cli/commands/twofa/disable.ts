import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { renderPasswordPrompt } from '../../ui/render.ts';

export default class TwoFactorDisable extends SvcCommand<typeof TwoFactorDisable> {
  static override operations = ['postAuth2faDisable'];
  static override summary = 'Turn off two-factor authentication (needs a current code).';
  static override examples = ['<%= config.bin %> 2fa disable', '<%= config.bin %> 2fa disable --code 123456 --json'];
  static override showHeader = false;
  static override flags = {
    code: Flags.string({ description: 'a current 6-digit code of your authenticator app' }),
  };

  async run(): Promise<{ enabled: boolean }> {
    const code =
      this.flags.code ??
      (this.interactive
        ? await renderPasswordPrompt({
            title: 'A current code, to turn two-factor authentication off',
            label: 'Code',
            masked: false,
            minLength: 6,
          })
        : undefined);
    await this.client.disableTwoFactor(
      this.requireInput(code, '--code', 'a current 6-digit code of your authenticator app'),
    );
    this.log('Two-factor authentication is off.');
    return { enabled: false };
  }
}
