import { SvcCommand } from '../../base-command.ts';

export interface TwoFactorState {
  enabled: boolean;
  pending: boolean;
}

export default class TwoFactorStatusCommand extends SvcCommand<typeof TwoFactorStatusCommand> {
  static override operations = ['getAuth2faStatus'];
  static override summary = 'Whether two-factor authentication (TOTP) is on for the signed-in admin.';
  static override examples = ['<%= config.bin %> 2fa status', '<%= config.bin %> 2fa status --json'];
  static override showHeader = false;

  async run(): Promise<TwoFactorState> {
    const state = await this.client.twoFactorStatus();
    this.log(
      state.enabled
        ? 'Two-factor authentication is on.'
        : state.pending
          ? 'Two-factor authentication is being set up: finish with `svc 2fa enable --code <code>`.'
          : 'Two-factor authentication is off: turn it on with `svc 2fa enable`.',
    );
    return state;
  }
}
