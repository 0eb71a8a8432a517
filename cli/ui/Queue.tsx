// The outbound queue, live: one line per destination domain (queued, deferred, in flight, oldest, next
// try, held or stuck, the last response), refreshed every few seconds, with keys to retry, hold and
// release the selected domain. `svc queue --watch`, and `o` in the dashboard.
import React, { useRef, useState } from 'react';
import { Box, Text, useInput } from 'ink';
import type { OutboundQueuePage } from '../../shared/schemas/outbound-queue.ts';
import {
  ageText,
  deliveryWarning,
  destinationFlag,
  nextTryText,
  reactionLines,
  resolverLines,
} from '../services/outbound-queue.ts';
import { fit, useTerminalSize } from './size.ts';
import { usePolling } from './use-polling.ts';

export interface QueueActions {
  retry: (domain: string) => Promise<void>;
  hold: (domain: string) => Promise<void>;
  release: (domain: string) => Promise<void>;
}

export interface QueueScreenProps {
  load: () => Promise<OutboundQueuePage>;
  /** Without them the screen only shows. */
  actions?: QueueActions;
  onExit: () => void;
  /** What q does, as its key help says: ends the command (quit), or returns to the screen that opened this one (back). */
  exitLabel?: 'quit' | 'back';
  refreshMs?: number;
  /** Terminal size (default: the real one). */
  columns?: number;
  rows?: number;
  /** The clock ages and next tries are measured against (tests fix it). */
  now?: () => number;
}

const KEYS = { t: 'retry', h: 'hold', u: 'release' } as const;
const PAST = { retry: 'made due now', hold: 'held', release: 'released' } as const;

export function QueueScreen({
  load,
  actions,
  onExit,
  exitLabel = 'quit',
  refreshMs = 3000,
  columns,
  rows,
  now = Date.now,
}: QueueScreenProps) {
  const size = useTerminalSize({ columns, rows });
  const width = Math.max(40, size.columns - 1);
  const { value: page, failure, refresh } = usePolling(load, refreshMs);
  const [notice, setNotice] = useState<{ text: string; error: boolean } | null>(null);
  const [selected, setSelected] = useState(0);

  const destinations = page?.data ?? [];
  const current = destinations[Math.min(selected, destinations.length - 1)];
  // The key handler reads the list through a ref: a key pressed right after a reload, before Ink has
  // subscribed the new handler, must act on the list on screen, not on the one before it.
  const shown = useRef({ destinations, current });
  shown.current = { destinations, current };

  useInput((input, key) => {
    const { destinations: listed, current: chosen } = shown.current;
    if (input === 'q' || key.escape) return onExit();
    if (input === 'r') return refresh();
    if (key.upArrow) return setSelected((value) => Math.max(0, value - 1));
    if (key.downArrow) return setSelected((value) => Math.min(listed.length - 1, value + 1));
    const action = KEYS[input as keyof typeof KEYS];
    if (!action || !actions || !chosen) return;
    const domain = chosen.domain;
    setNotice({ text: `${action} ${domain}…`, error: false });
    actions[action](domain).then(
      () => (setNotice({ text: `${domain} ${PAST[action]}.`, error: false }), refresh()),
      (error: Error) => setNotice({ text: `${action} ${domain}: ${error.message}`, error: true }),
    );
  });

  // Title, warning, reactions, header, notice and help stay on screen: the list gets the rest.
  const listRows = Math.max(1, size.rows - 6 - (page?.reactions.length ?? 0));
  const first = Math.max(0, Math.min(selected - listRows + 1, destinations.length - listRows));
  const at = now();
  const domainWidth = Math.min(32, Math.max(12, ...destinations.map((d) => d.domain.length)));
  // The selection mark, the columns below and the state column: the last response gets the rest.
  const fixed = 2 + domainWidth + 8 + 9 + 10 + 2 + 7 + 2 + 9 + 1 + 9;
  const line = (cells: string[]) =>
    fit(cells[0], domainWidth) +
    cells[1].padStart(8) +
    cells[2].padStart(9) +
    cells[3].padStart(10) +
    '  ' +
    fit(cells[4], 7) +
    '  ' +
    fit(cells[5], 9) +
    ' ';
  const warning = page ? deliveryWarning(page) : null;
  return (
    <Box flexDirection="column" width={width}>
      <Text bold wrap="truncate-end">
        svc queue · outbound
        {page ? (
          <Text dimColor>
            {' '}
            ({page.meta.total} destination{page.meta.total === 1 ? '' : 's'}, DELIVERY={page.delivery})
          </Text>
        ) : null}
      </Text>
      {failure ? <Text color="red">{failure}</Text> : null}
      {warning ? <Text color="yellow">! {warning}</Text> : null}
      {page
        ? resolverLines(page).map((line) => (
            <Text key={line} color="red" wrap="truncate-end">
              ! {line}
            </Text>
          ))
        : null}
      {page
        ? reactionLines(page).map((line) => (
            <Text key={line} color="magenta" wrap="truncate-end">
              {line}
            </Text>
          ))
        : null}
      {!page ? (
        <Text color="cyan">Loading…</Text>
      ) : destinations.length === 0 ? (
        <Text dimColor> The outbound queue is empty: no mail waits for a destination and none is held.</Text>
      ) : (
        <Box flexDirection="column">
          <Text bold wrap="truncate-end">
            {'  '}
            {line(['DOMAIN', 'QUEUED', 'DEFERRED', 'IN FLIGHT', 'OLDEST', 'NEXT TRY'])}
            {'STATE    LAST RESPONSE'}
          </Text>
          {destinations.slice(first, first + listRows).map((destination, index) => {
            const chosen = first + index === Math.min(selected, destinations.length - 1);
            const flag = destinationFlag(destination);
            return (
              <Text key={destination.domain} wrap="truncate-end" inverse={chosen}>
                {chosen ? '› ' : '  '}
                {line([
                  destination.domain,
                  String(destination.queued),
                  String(destination.deferred),
                  String(destination.inFlight),
                  ageText(destination.oldestAt, at),
                  nextTryText(destination.nextTryAt, at),
                ])}
                <Text color={destination.held ? 'yellow' : destination.stuck ? 'red' : undefined}>
                  {fit(flag.split(' ')[0], 8)}
                </Text>{' '}
                {fit(destination.lastResponse ?? '—', Math.max(10, width - fixed))}
              </Text>
            );
          })}
        </Box>
      )}
      {notice ? (
        <Text color={notice.error ? 'red' : 'green'} wrap="truncate-end">
          {notice.text}
        </Text>
      ) : null}
      {current?.held && current.holdReason ? (
        <Text dimColor wrap="truncate-end">
          {current.domain} held by {current.heldBy?.email ?? 'an admin'}: {current.holdReason}
        </Text>
      ) : null}
      <Text dimColor wrap="truncate-end">
        {actions ? '↑/↓ select · t retry now · h hold · u release · ' : ''}r refresh · q {exitLabel}
      </Text>
    </Box>
  );
}
