import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { keyValue } from '../../format.ts';
import {
  RETENTION_KINDS,
  type RetentionKind,
  type TenantRetentionBody,
  type UpdateTenantRetentionBody,
} from '../../../shared/schemas/retention.ts';

const LABELS: Record<RetentionKind, string> = {
  logsDays: 'logs',
  bodiesDays: 'bodies',
  rawMessagesDays: 'raw messages',
  eventsDays: 'events',
  webhookDeliveriesDays: 'webhook deliveries',
};

/** A flag per horizon: days, or "default" to clear the tenant's override. */
const days = (what: string) =>
  Flags.string({ description: `keep ${what} this many days (at most the platform default), or "default"` });

export default class TenantsRetention extends SvcCommand<typeof TenantsRetention> {
  static override operations = ['getTenantsByTenantIdRetention', 'patchTenantsByTenantIdRetention'];
  static override summary = "Show or shorten how long the current tenant's history is kept.";
  static override description =
    "Without flags: the effective horizons in days, the platform defaults and the tenant's overrides. With flags: " +
    'set overrides (owners and admins; a tenant may shorten, not lengthen). The maintenance worker applies them hourly.';
  static override examples = [
    '<%= config.bin %> tenants retention',
    '<%= config.bin %> tenants retention --logs 30 --bodies 7',
    '<%= config.bin %> tenants retention --bodies default --json',
  ];
  static override flags = {
    logs: days('email logs and their timeline'),
    bodies: days('the bodies of logs'),
    'raw-messages': days('raw captured messages'),
    events: days('events'),
    'webhook-deliveries': days('webhook deliveries'),
  };

  async run(): Promise<TenantRetentionBody> {
    const given: Record<RetentionKind, string | undefined> = {
      logsDays: this.flags.logs,
      bodiesDays: this.flags.bodies,
      rawMessagesDays: this.flags['raw-messages'],
      eventsDays: this.flags.events,
      webhookDeliveriesDays: this.flags['webhook-deliveries'],
    };
    const changes: UpdateTenantRetentionBody = {};
    for (const kind of RETENTION_KINDS) {
      const value = given[kind];
      if (value === undefined) continue;
      if (value !== 'default' && !/^\d+$/.test(value))
        this.error(`--${LABELS[kind].replace(' ', '-')} takes a number of days or "default".`, { exit: 2 });
      changes[kind] = value === 'default' ? null : Number(value);
    }
    const retention = Object.keys(changes).length
      ? await this.client.updateRetention(changes)
      : await this.client.getRetention();
    this.log(
      keyValue(
        RETENTION_KINDS.map((kind) => [
          LABELS[kind],
          `${retention.effective[kind]} days${retention.overrides[kind] === null ? ' (platform default)' : ` (override; platform default ${retention.platformDefault[kind]})`}`,
        ]),
      ),
    );
    return retention;
  }
}
