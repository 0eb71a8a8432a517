import { SvcCommand } from '../../base-command.ts';
import { keyValue } from '../../format.ts';

export interface WhoAmI {
  kind: 'admin' | 'apiKey';
  profile: string;
  baseUrl: string;
  email?: string;
  name?: string | null;
  isPlatformAdmin?: boolean;
  twoFactorEnabled?: boolean;
  tenant: { id: string; name?: string; role?: string } | null;
  tenants?: { id: string; name: string; role: string }[];
}

export default class WhoAmICommand extends SvcCommand<typeof WhoAmICommand> {
  static override operations = ['getAuthMe'];
  static override summary = 'Show who the CLI acts as, against which daemon and in which tenant.';
  static override examples = ['<%= config.bin %> whoami', '<%= config.bin %> whoami --json'];

  async run(): Promise<WhoAmI> {
    const http = this.client.http;
    if (http.usesApiKey) {
      const result: WhoAmI = {
        kind: 'apiKey',
        profile: this.profileName,
        baseUrl: http.baseUrl,
        tenant: http.tenantId ? { id: http.tenantId } : null,
      };
      this.log('Acting with the API key in SVC_API_KEY; the key decides the tenant.');
      return result;
    }
    const me = await this.client.me();
    const current = me.tenants.find((tenant) => tenant.id === http.tenantId);
    const result: WhoAmI = {
      kind: 'admin',
      profile: this.profileName,
      baseUrl: http.baseUrl,
      email: me.email,
      name: me.name,
      isPlatformAdmin: me.isPlatformAdmin,
      twoFactorEnabled: me.twoFactorEnabled,
      tenant: current
        ? { id: current.id, name: current.name, role: current.role }
        : http.tenantId
          ? { id: http.tenantId }
          : null,
      tenants: me.tenants.map(({ id, name, role }) => ({ id, name, role })),
    };
    this.log(
      keyValue([
        ['admin', `${me.email}${me.name ? ` (${me.name})` : ''}`],
        ['platform admin', me.isPlatformAdmin ? 'yes' : 'no'],
        ['2FA', me.twoFactorEnabled ? 'on' : 'off'],
        [
          'tenant',
          result.tenant
            ? `${result.tenant.name ?? ''} ${result.tenant.id}${result.tenant.role ? ` · ${result.tenant.role}` : ''}`.trim()
            : 'none',
        ],
        ['member of', String(me.tenants.length)],
      ]),
    );
    return result;
  }
}
