// `svc pools …`: IP pools of the outbound MTA, their addresses, warm-up and tenants (platform admins;
// docs/mta.md "IP pools and warm-up"). A pool is named by its name or its id.
import type { SvcClient } from '../client.ts';
import { CliFailure, EXIT } from '../errors.ts';
import type {
  AssignIpPoolBody,
  CreateIpPoolAddressBody,
  CreateIpPoolBody,
  IpPool,
  IpPoolList,
  ProviderWarmup,
  UpdateIpPoolAddressBody,
  WarmupSchedule,
} from '../../shared/schemas/ip-pools.ts';

const base = '/platform/ip-pools';
const platform = { tenant: false } as const;

export const listPools = (client: SvcClient) => client.http.request<IpPoolList>('GET', base, platform);

/** The pool named `nameOrId` (its name, or its id). */
export async function findPool(client: SvcClient, nameOrId: string): Promise<IpPool> {
  const { data } = await listPools(client);
  const pool = data.find((candidate) => candidate.id === nameOrId || candidate.name === nameOrId);
  if (!pool)
    throw new CliFailure(`No IP pool is named ${nameOrId}: run \`svc pools\` for the list.`, EXIT.refused, 'NOT_FOUND');
  return pool;
}

export const getPool = (client: SvcClient, poolId: string) =>
  client.http.request<IpPool>('GET', `${base}/${poolId}`, platform);

export const createPool = (client: SvcClient, body: CreateIpPoolBody) =>
  client.http.request<IpPool>('POST', base, { ...platform, json: body });

export const renamePool = (client: SvcClient, poolId: string, body: { name?: string; description?: string | null }) =>
  client.http.request<IpPool>('PATCH', `${base}/${poolId}`, { ...platform, json: body });

export const deletePool = (client: SvcClient, poolId: string) =>
  client.http.request<{ ok: true }>('DELETE', `${base}/${poolId}`, platform);

export const addAddress = (client: SvcClient, poolId: string, body: CreateIpPoolAddressBody) =>
  client.http.request<IpPool>('POST', `${base}/${poolId}/addresses`, { ...platform, json: body });

export const updateAddress = (client: SvcClient, poolId: string, addressId: string, body: UpdateIpPoolAddressBody) =>
  client.http.request<IpPool>('PATCH', `${base}/${poolId}/addresses/${addressId}`, { ...platform, json: body });

export const removeAddress = (client: SvcClient, poolId: string, addressId: string) =>
  client.http.request<{ ok: true }>('DELETE', `${base}/${poolId}/addresses/${addressId}`, platform);

export const assignPool = (client: SvcClient, poolId: string, body: AssignIpPoolBody) =>
  client.http.request<IpPool>('POST', `${base}/${poolId}/assignments`, { ...platform, json: body });

export const unassignPool = (client: SvcClient, poolId: string, assignmentId: string) =>
  client.http.request<{ ok: true }>('DELETE', `${base}/${poolId}/assignments/${assignmentId}`, platform);

export const setSchedule = (client: SvcClient, poolId: string, schedule: WarmupSchedule) =>
  client.http.request<IpPool>('PUT', `${base}/${poolId}/schedule`, { ...platform, json: schedule });

export const resetSchedule = (client: SvcClient, poolId: string) =>
  client.http.request<IpPool>('DELETE', `${base}/${poolId}/schedule`, platform);

/** The address of `pool` with this IP or id. */
export function addressOf(pool: IpPool, ipOrId: string): IpPool['addresses'][number] {
  const address = pool.addresses.find((candidate) => candidate.ip === ipOrId || candidate.id === ipOrId);
  if (!address) throw new CliFailure(`Pool ${pool.name} has no address ${ipOrId}.`, EXIT.refused, 'NOT_FOUND');
  return address;
}

/** A text bar of `sent` out of `ceiling` (null: warm, no ceiling). */
export function warmupBar(sent: number, ceiling: number | null, width = 20): string {
  if (ceiling === null) return `${'·'.repeat(width)} ${sent} (no ceiling)`;
  const filled = ceiling === 0 ? width : Math.min(width, Math.round((sent / ceiling) * width));
  return `${'█'.repeat(filled)}${'░'.repeat(width - filled)} ${sent}/${ceiling}`;
}

/**
 * What the provider refused today and how far that held the ramp back, or '': `12 refused · step 8 (2 days
 * held)`. The step differs from the warm-up day when days were held, or today is (mta/warmup.ts).
 */
export function warmupHoldNote(provider: ProviderWarmup, day: number | null): string {
  const notes: string[] = [];
  if (provider.refused > 0) notes.push(`${provider.refused} refused`);
  if (provider.step !== null && day !== null && provider.step !== day)
    notes.push(
      `step ${provider.step}${provider.heldDays > 0 ? ` (${provider.heldDays} day${provider.heldDays === 1 ? '' : 's'} held)` : ' (held today)'}`,
    );
  return notes.join(' · ');
}

/** The plain-text view of pools: what `svc pools` prints without a terminal, and the screen's fallback. */
export function describePools(pools: IpPool[]): string {
  if (pools.length === 0)
    return 'No IP pools: direct delivery leaves from OUTBOUND_ADDRESS. Create one: svc pools create <name>.';
  const lines: string[] = [];
  for (const pool of pools) {
    const schedule = `${pool.schedule.days}-day warm-up${pool.defaultSchedule ? ' (default schedule)' : ''}`;
    lines.push(`${pool.name}  ${pool.id}  ${schedule}  counts of ${pool.today} (UTC)`);
    const tenants = pool.assignments.map(
      (a) => `${a.tenantName}${a.projectId ? ` project ${a.projectId}` : ''}${a.stream ? ` ${a.stream}` : ''}`,
    );
    lines.push(`  tenants: ${tenants.join(', ') || 'none'}`);
    if (pool.addresses.length === 0) lines.push('  no addresses: its tenants send from OUTBOUND_ADDRESS');
    for (const address of pool.addresses) {
      const state =
        address.warmup.state === 'warm' ? 'warm' : `warm-up day ${address.warmup.day}/${address.warmup.days}`;
      lines.push(`  ${address.ip}  ${address.ehloName}  weight ${address.weight}  ${state}`);
      for (const provider of address.warmup.providers) {
        const note = warmupHoldNote(provider, address.warmup.day);
        lines.push(
          `    ${provider.provider.padEnd(10)} ${warmupBar(provider.sent, provider.ceiling)}${note ? `  ${note}` : ''}`,
        );
      }
    }
  }
  return lines.join('\n');
}
