import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { ApiRequestError } from '../../errors.ts';

export default class Logout extends SvcCommand<typeof Logout> {
  static override operations = ['postAuthLogout', 'postAuthLogoutAll'];
  static override summary = 'Sign out: revoke the session on the daemon and forget its tokens.';
  static override examples = [
    '<%= config.bin %> logout',
    '<%= config.bin %> logout --profile prod',
    '<%= config.bin %> logout --all',
  ];
  static override showHeader = false;
  static override flags = {
    all: Flags.boolean({ description: 'revoke every session of this admin, on every machine' }),
  };

  async run(): Promise<{ profile: string; revoked: boolean }> {
    const http = this.client.http;
    let revoked = false;
    if (http.profile.accessToken) {
      try {
        if (this.flags.all) await http.request<unknown>('POST', '/auth/logout-all', { tenant: false });
        else await this.client.logout();
        revoked = true;
      } catch (error) {
        // An expired or already revoked session is what logging out wants anyway.
        if (!(error instanceof ApiRequestError) || error.status >= 500) throw error;
      }
    }
    http.forgetTokens();
    this.log(
      this.flags.all && revoked
        ? `Signed out everywhere: every session of ${http.profile.email ?? 'this admin'} is revoked.`
        : `Signed out of profile ${this.profileName}.`,
    );
    return { profile: this.profileName, revoked };
  }
}
