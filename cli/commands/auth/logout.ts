import { SvcCommand } from '../../base-command.ts';
import { ApiRequestError } from '../../errors.ts';

export default class Logout extends SvcCommand<typeof Logout> {
  static override summary = 'Sign out: revoke the session on the daemon and forget its tokens.';
  static override examples = ['<%= config.bin %> logout', '<%= config.bin %> logout --profile prod'];
  static override showHeader = false;

  async run(): Promise<{ profile: string; revoked: boolean }> {
    const http = this.client.http;
    let revoked = false;
    if (http.profile.accessToken) {
      try {
        await this.client.logout();
        revoked = true;
      } catch (error) {
        // An expired or already revoked session is what logging out wants anyway.
        if (!(error instanceof ApiRequestError) || error.status >= 500) throw error;
      }
    }
    http.forgetTokens();
    this.log(`Signed out of profile ${this.profileName}.`);
    return { profile: this.profileName, revoked };
  }
}
