import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { CliFailure, EXIT, MissingInputError } from '../../errors.ts';
import { SignInFlow, readStdin, settleTenant } from '../../services/session.ts';
import { renderLogin, renderPasswordPrompt } from '../../ui/render.ts';
import { svcInvocation } from '../../invocation.ts';

export interface Registered {
  admin: { id: string; email: string };
  signedIn: boolean;
  tenant: { id: string; name: string } | null;
  /** The command to run next, as printed. */
  nextStep: string;
}

const domainOf = (email: string) => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

export default class Register extends SvcCommand<typeof Register> {
  static override operations = [
    'getAuthRegistrationStatus',
    'postAuthRegister',
    'postAuthLogin',
    'postAuthLoginVerify2fa',
    'getAuthMe',
    'postTenants',
  ];
  static override summary = 'Create an admin, sign in, and create a first tenant (or join one by invitation).';
  static override description =
    'The first admin registered becomes platform administrator. Registration may be closed once an admin exists; ' +
    'an invitation (`--invitation <token>` from the invitation mail) joins its tenant even then. A new admin gets a ' +
    'first tenant (--tenant, default: the domain of the address), so `svc send` works next.';
  static override examples = [
    '<%= config.bin %> register --email ops@example.com',
    'printf %s "$PASSWORD" | <%= config.bin %> register --email ops@example.com --password-stdin --tenant "Acme"',
    '<%= config.bin %> register --email ada@example.com --invitation 2f9c…',
  ];
  static override showHeader = false;
  static override flags = {
    email: Flags.string({ description: 'admin e-mail address', required: true }),
    name: Flags.string({ description: 'display name' }),
    'password-stdin': Flags.boolean({
      description: 'read the password (at least 10 characters) from stdin; in a terminal svc asks for it',
    }),
    tenant: Flags.string({
      description: 'name of the first tenant to create (default: the domain of --email)',
      exclusive: ['invitation'],
    }),
    'no-tenant': Flags.boolean({ description: 'create no tenant', exclusive: ['tenant'] }),
    invitation: Flags.string({ description: 'token of an invitation mail: join its tenant with its role' }),
    'base-url': Flags.string({ description: 'daemon URL to store in the profile' }),
  };

  async run(): Promise<Registered> {
    const { email, name, invitation } = this.flags;
    const http = this.client.http;
    if (this.flags['base-url']) http.baseUrlOverride = this.flags['base-url'];
    // Ask the daemon first: nobody should type a password for a registration that is closed.
    const status = await this.client.registrationStatus();
    if (!status.open && !invitation)
      throw new CliFailure(
        'Registration is closed on this daemon: ask an administrator to invite you.',
        EXIT.refused,
        'REGISTRATION_CLOSED',
      );
    let password: string;
    if (this.flags['password-stdin']) password = await readStdin();
    else if (this.interactive)
      password = await renderPasswordPrompt({
        title: `Choose a password for ${email} on ${http.baseUrl}`,
        confirm: true,
        minLength: 10,
      });
    else throw new MissingInputError('Pass --password-stdin and pipe the new password in');
    const { admin } = await this.client.register({
      email,
      password,
      ...(name ? { name } : {}),
      ...(invitation ? { invitationToken: invitation } : {}),
    });
    const flow = new SignInFlow(this.client);
    const outcome = await flow.submitCredentials(email, password);
    if (outcome === 'needs-code') {
      // A brand-new admin has no 2FA yet; this branch only runs if the daemon enforces it.
      await renderLogin({
        baseUrl: http.baseUrl,
        initialEmail: email,
        submitCredentials: (a, p) => flow.submitCredentials(a, p),
        submitCode: (c) => flow.submitCode(c),
      });
    }
    let tenant = await settleTenant(this.client);
    const tenantName =
      this.flags.tenant ?? (tenant || invitation || this.flags['no-tenant'] ? undefined : domainOf(email));
    if (tenantName) {
      const created = await this.client.createTenant(tenantName);
      http.saveProfile({ tenantId: created.id, tenantName: created.name });
      tenant = { id: created.id, name: created.name };
    }
    this.log(`Registered ${admin.email} and signed in on ${http.baseUrl}.`);
    if (tenant) this.log(`Tenant: ${tenant.name} (${tenant.id})`);
    const svc = svcInvocation();
    const nextStep = tenant
      ? `${svc} send --to ${email} --from hello@${domainOf(email)} --subject "Hello" --text "It works"   (then: ${svc} logs tail)`
      : `${svc} tenants create <name>`;
    this.log(`Next: ${nextStep}`);
    return { admin: { id: admin.id, email: admin.email }, signedIn: true, tenant, nextStep };
  }
}
