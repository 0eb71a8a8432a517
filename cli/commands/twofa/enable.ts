import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { renderPasswordPrompt } from '../../ui/render.ts';

export interface TwoFactorEnabled {
  enabled: boolean;
  /** Only when the enrolment was started and no code finished it (pipelines finish with --code). */
  otpauthUrl?: string;
  secret?: string;
}

export default class TwoFactorEnable extends SvcCommand<typeof TwoFactorEnable> {
  static override operations = ['getAuth2faStatus', 'postAuth2faEnable', 'postAuth2faVerify'];
  static override summary = 'Turn on two-factor authentication: scan the QR code, then type the first code.';
  static override description =
    'Starts the enrolment (a new TOTP secret), shows its otpauth:// URL as a QR code and asks for the 6-digit code ' +
    'your authenticator app shows. Without a terminal it prints the URL and secret; finish with ' +
    '`svc 2fa enable --code <code>`, which confirms the enrolment already started.';
  static override examples = [
    '<%= config.bin %> 2fa enable',
    '<%= config.bin %> 2fa enable --json',
    '<%= config.bin %> 2fa enable --code 123456',
  ];
  static override showHeader = false;
  static override flags = {
    code: Flags.string({
      description: 'a current code of the secret being enrolled (finishes an enrolment started before)',
    }),
  };

  async run(): Promise<TwoFactorEnabled> {
    const state = await this.client.twoFactorStatus();
    if (state.enabled) {
      this.log('Two-factor authentication is already on.');
      return { enabled: true };
    }
    if (this.flags.code && state.pending) {
      await this.client.verifyTwoFactor(this.flags.code);
      this.log('Two-factor authentication is on: sign-ins now ask for a code.');
      return { enabled: true };
    }
    const setup = await this.client.startTwoFactor();
    if (!this.jsonEnabled()) {
      const { default: QRCode } = await import('qrcode');
      this.log(await QRCode.toString(setup.otpauthUrl, { type: 'terminal', small: true }));
      this.log(`Scan it with your authenticator app, or enter the secret by hand: ${setup.secret}`);
    }
    const code =
      this.flags.code ??
      (this.interactive && !this.jsonEnabled()
        ? await renderPasswordPrompt({
            title: 'The 6-digit code your app shows now',
            label: 'Code',
            masked: false,
            minLength: 6,
          })
        : undefined);
    if (!code) {
      this.log('Finish with `svc 2fa enable --code <code>` (the code your app shows for this secret).');
      return { enabled: false, otpauthUrl: setup.otpauthUrl, secret: setup.secret };
    }
    await this.client.verifyTwoFactor(code);
    this.log('Two-factor authentication is on: sign-ins now ask for a code.');
    return { enabled: true };
  }
}
