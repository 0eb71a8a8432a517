// Live email log: newest at the bottom, status colours, filters, pause, and a detail view.
import React, { useEffect, useMemo, useRef, useState } from 'react';
import { Box, Text, useInput } from 'ink';
import { EMAIL_STATUSES } from '../../shared/constants.ts';
import type { EmailLogDetail } from '../api-types.ts';
import type { FeedMode, LogEntry } from '../services/log-feed.ts';
import { TextInput } from './TextInput.tsx';
import { fit, useTerminalSize } from './size.ts';

export const STATUS_COLOURS: Record<string, string> = {
  QUEUED: 'cyan',
  SENDING: 'blue',
  SENT: 'green',
  DELIVERED: 'greenBright',
  BOUNCED: 'red',
  COMPLAINED: 'magenta',
  FAILED: 'redBright',
  SUPPRESSED: 'yellow',
};

export type LogSource = (
  signal: AbortSignal,
  onMode: (mode: FeedMode, reason?: string) => void,
) => AsyncIterable<LogEntry>;

export interface LogTailProps {
  source: LogSource;
  loadDetail: (id: string) => Promise<EmailLogDetail>;
  onExit: () => void;
  /** What q does, as its key help says: ends the command (quit), or returns to the screen that opened this one (back). */
  exitLabel?: 'quit' | 'back';
  /** Entries shown at once; default: what fits the terminal under the header and the key help. */
  rows?: number;
  /** Terminal width (default: the real one). */
  columns?: number;
  initialStatus?: string;
  initialRecipient?: string;
}

const STATUS_CYCLE: (string | undefined)[] = [undefined, ...EMAIL_STATUSES];
const MAX_KEPT = 500;
const time = (iso: string | undefined) => (iso ? new Date(iso).toISOString().slice(11, 19) : '--:--:--');
const recipientsOf = (entry: LogEntry) => (Array.isArray(entry.to) ? entry.to.join(', ') : String(entry.to));

export function LogTail({
  source,
  loadDetail,
  onExit,
  exitLabel = 'quit',
  rows: rowsWanted,
  columns: columnsWanted,
  initialStatus,
  initialRecipient,
}: LogTailProps) {
  const size = useTerminalSize({ columns: columnsWanted });
  // Header, mode line and key help stay on screen: the list gets the rest.
  const rows = rowsWanted ?? Math.max(3, size.rows - 4);
  const width = Math.max(20, size.columns - 1);
  const [entries, setEntries] = useState<LogEntry[]>([]);
  const [frozen, setFrozen] = useState<{ entries: LogEntry[]; atCount: number } | null>(null);
  const [received, setReceived] = useState(0);
  const [mode, setMode] = useState<{ mode: FeedMode | 'connecting'; reason?: string }>({ mode: 'connecting' });
  const [failure, setFailure] = useState<string | null>(null);
  const [status, setStatus] = useState<string | undefined>(initialStatus);
  const [recipient, setRecipient] = useState(initialRecipient ?? '');
  const [editingRecipient, setEditingRecipient] = useState(false);
  const [cursor, setCursor] = useState<number | null>(null);
  const [detail, setDetail] = useState<EmailLogDetail | 'loading' | { error: string } | null>(null);
  const latest = useRef<LogEntry[]>([]);

  useEffect(() => {
    const controller = new AbortController();
    void (async () => {
      try {
        for await (const entry of source(controller.signal, (next, reason) => setMode({ mode: next, reason }))) {
          const others = latest.current.filter((existing) => existing.id !== entry.id);
          latest.current = [...others, entry].slice(-MAX_KEPT);
          setEntries(latest.current);
          setReceived((count) => count + 1);
        }
      } catch (error) {
        if (!controller.signal.aborted) setFailure((error as Error).message);
      }
    })();
    return () => controller.abort();
  }, [source]);

  const shown = frozen?.entries ?? entries;
  const visible = useMemo(
    () =>
      shown
        .filter(
          (entry) =>
            (!status || entry.status === status) &&
            (!recipient || recipientsOf(entry).toLowerCase().includes(recipient.toLowerCase())),
        )
        .slice(-rows),
    [shown, status, recipient, rows],
  );
  const selected = cursor === null ? null : (visible[Math.min(cursor, visible.length - 1)] ?? null);

  useInput(
    (input, key) => {
      if (detail) {
        if (key.escape || key.return || input === 'q') setDetail(null);
        return;
      }
      if (input === 'q' || key.escape) return onExit();
      if (input === 'p' || input === ' ') return setFrozen(frozen ? null : { entries, atCount: received });
      if (input === 's') return setStatus(STATUS_CYCLE[(STATUS_CYCLE.indexOf(status) + 1) % STATUS_CYCLE.length]);
      if (input === '/') return setEditingRecipient(true);
      if (input === 'c') {
        setStatus(undefined);
        return setRecipient('');
      }
      if (key.upArrow) return setCursor(cursor === null ? visible.length - 1 : Math.max(0, cursor - 1));
      if (key.downArrow) return setCursor(cursor === null ? null : cursor + 1 >= visible.length ? null : cursor + 1);
      if (key.return && selected) {
        setDetail('loading');
        loadDetail(selected.id).then(setDetail, (error: Error) => setDetail({ error: error.message }));
      }
    },
    { isActive: !editingRecipient },
  );

  const modeLabel = mode.mode === 'stream' ? 'live' : mode.mode === 'poll' ? 'polling' : 'connecting…';
  return (
    <Box flexDirection="column" width={width}>
      <Text wrap="truncate-end">
        <Text bold>Email log </Text>
        {/* One state at a time: a paused view is not live, whatever the connection does meanwhile. */}
        {frozen ? (
          <Text color="yellow">❚❚ paused ({received - frozen.atCount} new)</Text>
        ) : (
          <Text color={mode.mode === 'stream' ? 'green' : 'yellow'}>● {modeLabel}</Text>
        )}
        <Text dimColor>
          {' '}
          status: {status ?? 'all'} · to: {recipient || 'anyone'}
        </Text>
      </Text>
      {mode.reason ? (
        <Text dimColor wrap="truncate-end">
          {mode.reason}
        </Text>
      ) : null}
      {failure ? <Text color="red">{failure}</Text> : null}
      {detail ? (
        <DetailView detail={detail} />
      ) : (
        <Box flexDirection="column">
          {visible.length === 0 ? <Text dimColor>Waiting for sends…</Text> : null}
          {visible.map((entry) => {
            const columns = layoutColumns(width);
            return (
              <Text key={entry.id} inverse={selected?.id === entry.id} wrap="truncate-end">
                {columns.time ? <Text dimColor>{time(entry.updatedAt ?? entry.createdAt)} </Text> : null}
                <Text color={STATUS_COLOURS[entry.status]}>{entry.status.padEnd(10)}</Text>
                <Text> {fit(recipientsOf(entry), columns.to)} </Text>
                <Text>{fit(entry.subject ?? '', columns.subject).trimEnd()}</Text>
                {entry.error ? <Text color="red"> {entry.error}</Text> : null}
              </Text>
            );
          })}
        </Box>
      )}
      {editingRecipient ? (
        <Box>
          <Text>Recipient contains: </Text>
          <TextInput value={recipient} onChange={setRecipient} onSubmit={() => setEditingRecipient(false)} />
        </Box>
      ) : (
        <Text dimColor wrap="truncate-end">
          {detail
            ? 'Esc back'
            : width >= 80
              ? `p pause · s status · / recipient · c clear · ↑/↓ select · Enter open · q ${exitLabel}`
              : `q ${exitLabel} · p pause · s status · / to · c clear · ↑↓ Enter`}
        </Text>
      )}
    </Box>
  );
}

/** Column widths for a terminal `width` wide: the time goes first when space is short, then the subject shrinks. */
export function layoutColumns(width: number): { time: boolean; to: number; subject: number } {
  const time = width >= 60;
  const rest = width - (time ? 9 : 0) - 10 - 2;
  const to = Math.max(8, Math.min(32, Math.floor(rest * 0.45)));
  return { time, to, subject: Math.max(0, rest - to - 1) };
}

function DetailView({ detail }: { detail: EmailLogDetail | 'loading' | { error: string } }) {
  if (detail === 'loading') return <Text color="cyan">Loading…</Text>;
  if ('error' in detail && !('id' in detail)) return <Text color="red">{detail.error}</Text>;
  const log = detail as EmailLogDetail;
  return (
    <Box flexDirection="column" borderStyle="round" paddingX={1}>
      <Text>
        <Text dimColor>id </Text>
        {log.id}
      </Text>
      <Text>
        <Text dimColor>status </Text>
        <Text color={STATUS_COLOURS[log.status]}>{log.status}</Text>
        {log.error ? <Text color="red"> {log.error}</Text> : null}
      </Text>
      <Text>
        <Text dimColor>from </Text>
        {log.from}
      </Text>
      <Text>
        <Text dimColor>to </Text>
        {log.to.join(', ')}
      </Text>
      <Text>
        <Text dimColor>subject </Text>
        {log.subject}
      </Text>
      <Text>
        <Text dimColor>message </Text>
        {log.messageId}
      </Text>
      {log.smtpResponse ? (
        <Text>
          <Text dimColor>smtp </Text>
          {log.smtpResponse}
        </Text>
      ) : null}
      {(log.events ?? []).map((event, index) => (
        <Text key={index} dimColor>
          {' '}
          {event.createdAt.slice(0, 19).replace('T', ' ')} {event.type}
        </Text>
      ))}
      {log.bodyText ? <Text>{log.bodyText.split('\n').slice(0, 6).join('\n')}</Text> : null}
    </Box>
  );
}
