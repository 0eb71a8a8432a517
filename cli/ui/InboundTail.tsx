// Live routed mail (`svc inbound tail`): newest at the bottom, status colours, a parsed view (Enter) and the
// raw source (r) of the selected message.
import React, { useEffect, useMemo, useRef, useState } from 'react';
import { Box, Text, useInput } from 'ink';
import {
  INBOUND_MESSAGE_STATUSES,
  type InboundMessageDetail,
  type InboundMessageSummary,
} from '../../shared/schemas/inbound.ts';
import { attachmentLines, messageFields } from '../services/inbound-message-view.ts';
import { fit, useTerminalSize } from './size.ts';

export const INBOUND_STATUS_COLOURS: Record<string, string> = {
  received: 'cyan',
  delivered: 'green',
  stored: 'blue',
  forwarded: 'greenBright',
  failed: 'redBright',
};

export interface InboundTailProps {
  source: (signal: AbortSignal) => AsyncIterable<InboundMessageSummary>;
  loadDetail: (id: string) => Promise<InboundMessageDetail>;
  loadRaw: (id: string) => Promise<string>;
  onExit: () => void;
  rows?: number;
  columns?: number;
  initialStatus?: string;
}

type Opened =
  | { kind: 'loading'; id: string }
  | { kind: 'error'; message: string }
  | { kind: 'detail'; message: InboundMessageDetail }
  | { kind: 'raw'; id: string; lines: string[] };

const STATUS_CYCLE: (string | undefined)[] = [undefined, ...INBOUND_MESSAGE_STATUSES];
const MAX_KEPT = 500;
const time = (iso: string) => new Date(iso).toISOString().slice(11, 19);

export function InboundTail({
  source,
  loadDetail,
  loadRaw,
  onExit,
  rows: rowsWanted,
  columns,
  initialStatus,
}: InboundTailProps) {
  const size = useTerminalSize({ columns });
  const rows = rowsWanted ?? Math.max(3, size.rows - 4);
  const width = Math.max(20, size.columns - 1);
  const [messages, setMessages] = useState<InboundMessageSummary[]>([]);
  const [paused, setPaused] = useState<InboundMessageSummary[] | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [status, setStatus] = useState<string | undefined>(initialStatus);
  const [cursor, setCursor] = useState<number | null>(null);
  const [opened, setOpened] = useState<Opened | null>(null);
  const [scroll, setScroll] = useState(0);
  const latest = useRef<InboundMessageSummary[]>([]);

  useEffect(() => {
    const controller = new AbortController();
    void (async () => {
      try {
        for await (const message of source(controller.signal)) {
          latest.current = [...latest.current.filter((m) => m.id !== message.id), message].slice(-MAX_KEPT);
          setMessages(latest.current);
        }
      } catch (error) {
        if (!controller.signal.aborted) setFailure((error as Error).message);
      }
    })();
    return () => controller.abort();
  }, [source]);

  const visible = useMemo(
    () => (paused ?? messages).filter((m) => !status || m.status === status).slice(-rows),
    [paused, messages, status, rows],
  );
  const selected = cursor === null ? null : (visible[Math.min(cursor, visible.length - 1)] ?? null);

  const open = (id: string, raw: boolean) => {
    setScroll(0);
    setOpened({ kind: 'loading', id });
    const load = raw
      ? loadRaw(id).then((text): Opened => ({ kind: 'raw', id, lines: text.split(/\r?\n/) }))
      : loadDetail(id).then((message): Opened => ({ kind: 'detail', message }));
    load.then(setOpened, (error: Error) => setOpened({ kind: 'error', message: error.message }));
  };

  // What the keys act on, as last drawn: Ink re-subscribes the handler in an effect, which a loaded
  // machine runs after the frame is on screen, so a key typed then would otherwise see the state before it.
  const drawn = useRef({ opened, visible, selected, paused, messages });
  drawn.current = { opened, visible, selected, paused, messages };

  useInput((input, key) => {
    const { opened, visible, selected, paused, messages } = drawn.current;
    if (opened) {
      if (key.escape || input === 'q') return setOpened(null);
      if (key.return && opened.kind === 'raw') return open(opened.id, false);
      if (input === 'r' && opened.kind === 'detail') return open(opened.message.id, true);
      if (key.downArrow || input === 'j') return setScroll((s) => s + 1);
      if (key.upArrow || input === 'k') return setScroll((s) => Math.max(0, s - 1));
      if (key.pageDown || input === ' ') return setScroll((s) => s + rows);
      if (key.pageUp) return setScroll((s) => Math.max(0, s - rows));
      return;
    }
    if (input === 'q' || key.escape) return onExit();
    if (input === 'p') return setPaused(paused ? null : messages);
    if (input === 's') return setStatus((now) => STATUS_CYCLE[(STATUS_CYCLE.indexOf(now) + 1) % STATUS_CYCLE.length]);
    // Functional updates: two keys between two renders both count.
    if (key.upArrow) return setCursor((now) => (now === null ? visible.length - 1 : Math.max(0, now - 1)));
    if (key.downArrow) return setCursor((now) => (now === null || now + 1 >= visible.length ? null : now + 1));
    // With nothing selected, Enter and r take the newest message: the one a person watching waits for.
    const target = selected ?? visible.at(-1);
    if (target && key.return) return open(target.id, false);
    if (target && input === 'r') return open(target.id, true);
  });

  const fromWidth = Math.max(8, Math.min(30, Math.floor((width - 22) * 0.35)));
  const toWidth = Math.max(8, Math.min(30, Math.floor((width - 22) * 0.3)));
  return (
    <Box flexDirection="column" width={width}>
      <Text wrap="truncate-end">
        <Text bold>Inbound mail </Text>
        {paused ? <Text color="yellow">❚❚ paused</Text> : <Text color="green">● live</Text>}
        <Text dimColor> status: {status ?? 'all'}</Text>
      </Text>
      {failure ? <Text color="red">{failure}</Text> : null}
      {opened ? (
        <OpenedView opened={opened} rows={rows} scroll={scroll} />
      ) : (
        <Box flexDirection="column">
          {visible.length === 0 ? <Text dimColor>Waiting for mail…</Text> : null}
          {visible.map((m) => (
            <Text key={m.id} inverse={selected?.id === m.id} wrap="truncate-end">
              {/* The mark as well as the inverse: a terminal without colours still shows the selection. */}
              <Text>{selected?.id === m.id ? '› ' : '  '}</Text>
              <Text dimColor>{time(m.createdAt)} </Text>
              <Text color={INBOUND_STATUS_COLOURS[m.status]}>{m.status.padEnd(10)}</Text>
              <Text> {fit(m.from ?? m.mailFrom ?? '<>', fromWidth)} </Text>
              <Text>{fit(m.recipient, toWidth)} </Text>
              <Text>{m.subject ?? ''}</Text>
            </Text>
          ))}
        </Box>
      )}
      <Text dimColor wrap="truncate-end">
        {opened?.kind === 'raw'
          ? '↑/↓ space scroll · Enter parsed · Esc back'
          : opened
            ? '↑/↓ space scroll · r raw source · Esc back'
            : 'p pause · s status · ↑/↓ select · Enter open · r raw · q quit'}
      </Text>
    </Box>
  );
}

function OpenedView({ opened, rows, scroll }: { opened: Opened; rows: number; scroll: number }) {
  if (opened.kind === 'loading') return <Text color="cyan">Loading…</Text>;
  if (opened.kind === 'error') return <Text color="red">{opened.message}</Text>;
  const lines =
    opened.kind === 'raw'
      ? opened.lines
      : [
          ...messageFields(opened.message)
            .filter(([, value]) => value !== null)
            .map(([label, value]) => `${label.padEnd(11)} ${value}`),
          ...attachmentLines(opened.message).map((line) => `attachment  ${line}`),
          '',
          ...opened.message.parsed.strippedText.split(/\r?\n/),
        ];
  const start = Math.min(scroll, Math.max(0, lines.length - 1));
  return (
    <Box flexDirection="column">
      {lines.slice(start, start + rows).map((line, index) => (
        <Text key={start + index} wrap="truncate-end">
          {line || ' '}
        </Text>
      ))}
    </Box>
  );
}
