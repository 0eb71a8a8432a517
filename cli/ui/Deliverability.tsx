// `svc stats deliverability` in a terminal: per provider, the period's delivered volume as a sparkline
// over the days, the problems (deferred + bounced + complained) under it, and the totals with the
// complaint rate coloured against the providers' levels (0.1 % warn, 0.3 % never).
import React from 'react';
import { Box, Text, useInput } from 'ink';
import type { DeliverabilityBody } from '../../shared/schemas/deliverability.ts';
import { complaintLevel, percent, providerSeries, scaleOf, sparkline } from '../services/deliverability-report.ts';
import { useTerminalSize } from './size.ts';

export interface DeliverabilityProps {
  body: DeliverabilityBody;
  onExit: () => void;
  /** Terminal width (default: the real one). */
  columns?: number;
}

const LEVEL_COLOUR = { ok: 'green', warn: 'yellow', bad: 'red' } as const;

export function Deliverability({ body, onExit, columns }: DeliverabilityProps) {
  useInput((input, key) => {
    if (input === 'q' || key.escape) onExit();
  });
  const size = useTerminalSize();
  const width = Math.max(20, (columns ?? size.columns) - 14);
  const series = providerSeries(body);
  // A long period keeps its newest days when the terminal is narrower than the period.
  const tail = (values: number[]) => values.slice(Math.max(0, values.length - width));
  return (
    <Box flexDirection="column">
      <Text bold>
        Deliverability {body.from} → {body.to}
        {body.provider ? ` · ${body.provider}` : ''} <Text dimColor>(UTC days)</Text>
      </Text>
      {series.length === 0 ? <Text dimColor>No delivery outcomes in this period.</Text> : null}
      {series.map((s) => (
        <Box key={s.provider} flexDirection="column" marginTop={1}>
          <Text>
            <Text bold>{s.provider}</Text> delivered {s.totals.delivered} · deferred {s.totals.deferred} · bounced{' '}
            {s.totals.bounced} · complained {s.totals.complained} · complaint rate{' '}
            <Text color={LEVEL_COLOUR[complaintLevel(s.complaintRate)]}>{percent(s.complaintRate)}</Text> · bounce rate{' '}
            {percent(s.bounceRate)}
          </Text>
          <Text>
            <Text dimColor>{'delivered'.padStart(10)} </Text>
            <Text color="green">{sparkline(tail(s.delivered), scaleOf(s))}</Text>
          </Text>
          <Text>
            <Text dimColor>{'problems'.padStart(10)} </Text>
            <Text color="red">{sparkline(tail(s.problems), scaleOf(s))}</Text>
          </Text>
        </Box>
      ))}
      <Text dimColor>q or Esc: quit</Text>
    </Box>
  );
}
