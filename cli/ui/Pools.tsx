// The IP pools screen (`svc pools` in a terminal): per pool its tenants, per address its warm-up day
// and a bar per provider of today's count against today's ceiling. Refreshed every 5 s; q or Esc leaves.
import React from 'react';
import { Box, Text, useInput } from 'ink';
import type { IpPool } from '../../shared/schemas/ip-pools.ts';
import { usePolling } from './use-polling.ts';
import { warmupHoldNote } from '../services/ip-pools.ts';

export interface PoolsProps {
  load: () => Promise<IpPool[]>;
  /** Pools to draw before (or instead of) the first load: a capture, a test. */
  initial?: IpPool[];
  refreshMs?: number;
  onExit: () => void;
}

const BAR_WIDTH = 24;

/** Today's count against today's ceiling, or a note that the address has none. */
export function WarmupBar({ sent, ceiling }: { sent: number; ceiling: number | null }) {
  if (ceiling === null)
    return (
      <Text>
        <Text color="green">{'━'.repeat(BAR_WIDTH)}</Text> {sent} sent, no ceiling
      </Text>
    );
  const ratio = ceiling === 0 ? 1 : Math.min(1, sent / ceiling);
  const filled = Math.round(ratio * BAR_WIDTH);
  const color = ratio >= 1 ? 'red' : ratio >= 0.8 ? 'yellow' : 'cyan';
  return (
    <Text>
      <Text color={color}>{'█'.repeat(filled)}</Text>
      <Text dimColor>{'░'.repeat(BAR_WIDTH - filled)}</Text> {sent}/{ceiling}
      {ratio >= 1 ? ' full: warm addresses take the rest, or it waits' : ''}
    </Text>
  );
}

function AddressRows({ address }: { address: IpPool['addresses'][number] }) {
  const { warmup } = address;
  // Held days can take the calendar day past the schedule's last (day 32/30 with Google still warming).
  const progressTenths = Math.min(10, Math.round(((warmup.day ?? 0) / warmup.days) * 10));
  const progress =
    warmup.state === 'warm' ? (
      <Text color="green">warm</Text>
    ) : (
      <Text>
        warm-up day <Text bold>{warmup.day}</Text>/{warmup.days}{' '}
        <Text color="cyan">
          {'▰'.repeat(progressTenths)}
          {'▱'.repeat(10 - progressTenths)}
        </Text>
      </Text>
    );
  return (
    <Box flexDirection="column" marginLeft={2}>
      <Text>
        <Text bold>{address.ip}</Text> {address.ehloName} · weight {address.weight} · {progress}
      </Text>
      {warmup.providers.map((provider) => {
        const note = warmupHoldNote(provider, warmup.day);
        return (
          <Box key={provider.provider} marginLeft={2}>
            <Box width={11}>
              <Text>{provider.provider}</Text>
            </Box>
            <WarmupBar sent={provider.sent} ceiling={provider.ceiling} />
            {note ? <Text color="yellow"> {note}</Text> : null}
          </Box>
        );
      })}
    </Box>
  );
}

export function PoolView({ pool }: { pool: IpPool }) {
  const tenants = pool.assignments
    .map(
      (a) =>
        `${a.tenantName}${a.projectId ? ` (project ${a.projectId.slice(0, 8)})` : ''}${a.stream ? ` [${a.stream}]` : ''}`,
    )
    .join(', ');
  return (
    <Box flexDirection="column" marginBottom={1}>
      <Text>
        <Text bold color="magenta">
          {pool.name}
        </Text>{' '}
        <Text dimColor>
          {pool.schedule.days}-day schedule{pool.defaultSchedule ? ' (default)' : ''} · counts of {pool.today} UTC
        </Text>
      </Text>
      <Text>
        {'  '}tenants: {tenants || <Text dimColor>none</Text>}
      </Text>
      {pool.addresses.length === 0 ? (
        <Text dimColor>{'  '}no addresses: its tenants send from OUTBOUND_ADDRESS</Text>
      ) : (
        pool.addresses.map((address) => <AddressRows key={address.id} address={address} />)
      )}
    </Box>
  );
}

export function Pools({ load, initial, refreshMs = 5_000, onExit }: PoolsProps) {
  const { value: pools, failure: error } = usePolling(load, refreshMs, initial ?? null);
  useInput((input, key) => {
    if (input === 'q' || key.escape) onExit();
  });
  return (
    <Box flexDirection="column">
      <Text bold>IP pools and warm-up</Text>
      {error ? <Text color="red">{error}</Text> : null}
      {pools === null ? <Text dimColor>loading…</Text> : null}
      {pools?.length === 0 ? <Text dimColor>No IP pools: svc pools create &lt;name&gt;</Text> : null}
      {pools?.map((pool) => (
        <PoolView key={pool.id} pool={pool} />
      ))}
      <Text dimColor>q leaves · refreshed every {Math.round(refreshMs / 1000)} s</Text>
    </Box>
  );
}
