import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { keyValue } from '../../format.ts';
import { changeThrottle, limitFlag, rateText, readThrottle } from '../../services/shaping.ts';
import { tenantIdFor } from '../../services/tenant-admin.ts';
import type { TenantThrottleBody } from '../../../shared/schemas/shaping.ts';

export default class TenantsThrottle extends SvcCommand<typeof TenantsThrottle> {
  static override operations = [
    'getTenants',
    'getPlatformTenantsByTenantIdThrottle',
    'putPlatformTenantsByTenantIdThrottle',
  ];
  static override summary =
    "Show or set a tenant's delivery throttle: messages a second and an hour over all nodes (platform admins).";
  static override description =
    'Without flags, shows it. A flag not given keeps its value; "none" lifts that limit. Messages over the throttle ' +
    'wait in the spool (not an attempt). The hourly count is exact across nodes; the per-second pace is kept per ' +
    'node, each taking its share.';
  static override examples = [
    '<%= config.bin %> tenants throttle "Acme Staging" --per-second 2 --per-hour 5000',
    '<%= config.bin %> tenants throttle "Acme Staging" --per-hour none',
    '<%= config.bin %> tenants throttle --json',
  ];
  static override args = { id: Args.string({ description: 'tenant id or name (default: the current tenant)' }) };
  static override flags = {
    'per-second': Flags.string({ description: 'messages a second (decimals allowed), or "none"' }),
    'per-hour': Flags.string({ description: 'messages per clock hour, or "none"' }),
  };

  async run(): Promise<TenantThrottleBody> {
    const tenantId = await tenantIdFor(this.client, this.args.id);
    const perSecond = limitFlag('per-second', this.flags['per-second'], 'number');
    const perHour = limitFlag('per-hour', this.flags['per-hour'], 'integer');
    let throttle = await readThrottle(this.client, tenantId);
    if (perSecond !== undefined || perHour !== undefined)
      throttle = await changeThrottle(this.client, tenantId, {
        messagesPerSecond: perSecond === undefined ? throttle.messagesPerSecond : perSecond,
        messagesPerHour: perHour === undefined ? throttle.messagesPerHour : perHour,
      });
    this.log(
      keyValue([
        ['Tenant', throttle.tenantId],
        ['Per second', rateText(throttle.messagesPerSecond, 's')],
        ['Per hour', rateText(throttle.messagesPerHour, 'h')],
      ]),
    );
    return throttle;
  }
}
