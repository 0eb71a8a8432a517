import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { MissingInputError, CliFailure, EXIT } from '../../errors.ts';
import { SignInFlow, readStdin, settleTenant, type SignedIn } from '../../services/session.ts';
import { renderLogin, renderPicker } from '../../ui/render.ts';

export default class Login extends SvcCommand<typeof Login> {
  static override operations = ['postAuthLogin', 'postAuthLoginVerify2fa', 'getAuthMe', 'getTenants'];
  static override summary = 'Sign in as an admin and store the session in a profile.';
  static override description =
    'In a terminal a form asks for the e-mail, the password (hidden) and, when two-factor authentication is on, ' +
    'the authenticator code. Without a terminal pass --email, --password-stdin and --code. Tokens are kept in ' +
    'the profile file (mode 0600); the access token is refreshed on its own.';
  static override examples = [
    '<%= config.bin %> login',
    '<%= config.bin %> login --base-url https://mail.example.com --profile prod',
    'printf %s "$ADMIN_PASSWORD" | <%= config.bin %> login --email ops@example.com --password-stdin --code 123456 --json',
  ];
  static override showHeader = false;
  static override flags = {
    email: Flags.string({ description: 'admin e-mail address' }),
    'password-stdin': Flags.boolean({ description: 'read the password from stdin (never pass it as a flag)' }),
    code: Flags.string({ description: 'current 6-digit authenticator code, when 2FA is on' }),
    'base-url': Flags.string({ description: 'daemon URL to store in the profile, e.g. http://127.0.0.1:3000' }),
  };

  async run(): Promise<SignedIn> {
    const { email, code } = this.flags;
    const http = this.client.http;
    if (this.flags['base-url']) http.baseUrlOverride = this.flags['base-url'];
    const flow = new SignInFlow(this.client);

    if (this.flags['password-stdin'] || !this.interactive) {
      const address = this.requireInput(email, '--email', 'the admin address to sign in with');
      if (!this.flags['password-stdin']) throw new MissingInputError('Pass --password-stdin and pipe the password in');
      const password = await readStdin();
      if (password === '')
        throw new MissingInputError('The password read from stdin is empty: pipe it in with --password-stdin');
      const outcome = await flow.submitCredentials(address, password);
      if (outcome === 'needs-code') {
        if (!code) {
          throw new CliFailure(
            'This account uses two-factor authentication: pass --code with the current 6-digit code.',
            EXIT.usage,
            'MISSING_FLAG',
          );
        }
        await flow.submitCode(code);
      }
      return this.finish(address);
    }

    const signedInAs = await renderLogin({
      baseUrl: http.baseUrl,
      initialEmail: email,
      submitCredentials: (address, password) => flow.submitCredentials(address, password),
      submitCode: (value) => flow.submitCode(value),
    });
    return this.finish(signedInAs, true);
  }

  private async finish(email: string, canPick = false): Promise<SignedIn> {
    let tenant = await settleTenant(this.client);
    // A person with several tenants and none chosen yet picks one now, instead of a later error.
    if (!tenant && canPick && this.interactive) {
      const tenants = await this.client.listTenants();
      if (tenants.length > 1) {
        const id = await renderPicker(
          'Choose the tenant to act in',
          tenants.map((t) => ({ label: t.name, value: t.id, hint: `${t.id}${t.role ? ` · ${t.role}` : ''}` })),
        );
        const chosen = tenants.find((t) => t.id === id)!;
        this.client.http.saveProfile({ tenantId: chosen.id, tenantName: chosen.name });
        tenant = { id: chosen.id, name: chosen.name };
      }
    }
    const result: SignedIn = { email, profile: this.profileName, baseUrl: this.client.http.baseUrl, tenant };
    this.log(`Signed in as ${email} on ${result.baseUrl} (profile ${result.profile}).`);
    this.log(
      tenant
        ? `Tenant: ${tenant.name} (${tenant.id})`
        : 'No tenant selected yet: run `svc tenants use` or `svc tenants create`.',
    );
    return result;
  }
}
