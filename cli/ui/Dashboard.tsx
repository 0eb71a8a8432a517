// The screen `svc` opens in a terminal: quota, queues, recent sends, failing webhooks, and keys to
// jump to the other screens.
import React, { useState } from 'react';
import { Box, Text, useInput } from 'ink';
import { failingInboundTexts, inboundDayText, type DashboardData, type Panel } from '../services/dashboard.ts';
import type { QueueStats, QueuesHealth } from '../../shared/schemas/health.ts';
import { LogTail, STATUS_COLOURS, type LogTailProps } from './LogTail.tsx';
import { Picker, type PickerItem } from './Picker.tsx';
import { QueueScreen, type QueueScreenProps } from './Queue.tsx';
import { fit, useTerminalSize } from './size.ts';
import { usePolling } from './use-polling.ts';
import { sendingStateOf } from '../services/sending-state.ts';

export const DASHBOARD_ACTIONS = {
  l: { command: 'logs:tail', label: 'live log' },
  t: { command: 'tenants:use', label: 'switch tenant' },
  k: { command: 'keys:list', label: 'API keys' },
  d: { command: 'domains:list', label: 'domains' },
  w: { command: 'webhooks:list', label: 'webhooks' },
  s: { command: 'suppressions:list', label: 'suppressions' },
  m: { command: 'templates:list', label: 'templates' },
  o: { command: 'queue', label: 'outbound queue' },
  v: { command: 'stats:deliverability', label: 'deliverability' },
} as const;
export type DashboardAction = (typeof DASHBOARD_ACTIONS)[keyof typeof DASHBOARD_ACTIONS]['command'];

/** Screens the dashboard opens inside itself; Esc (or q) comes back. Without them a key ends the dashboard with onAction. */
export interface DashboardViews {
  /** The human output of a list command (keys, domains, webhooks, suppressions, templates, deliverability). */
  text: (action: DashboardAction) => Promise<string>;
  logTail: Omit<LogTailProps, 'onExit'>;
  tenants: () => Promise<PickerItem<string>[]>;
  useTenant: (id: string) => Promise<void>;
  /** The live outbound queue (platform admins); without it `o` shows `svc queue`'s table as text. */
  queue?: Omit<QueueScreenProps, 'onExit'>;
}

export interface DashboardProps {
  load: () => Promise<DashboardData>;
  onAction: (action: DashboardAction) => void;
  onExit: () => void;
  refreshMs?: number;
  views?: DashboardViews;
  /** Terminal size (default: the real one). */
  columns?: number;
  rows?: number;
}

type Inner =
  | { kind: 'text'; title: string; body: string | null; error?: string }
  | { kind: 'log' }
  | { kind: 'queue' }
  | { kind: 'tenants'; items: PickerItem<string>[] | null; error?: string };

/** A list screen inside the dashboard: the command's own output, and the way back. */
function TextScreen({ screen, onBack }: { screen: Extract<Inner, { kind: 'text' }>; onBack: () => void }) {
  useInput((input, key) => {
    if (input === 'q' || key.escape) onBack();
  });
  return (
    <Box flexDirection="column">
      <Text bold>svc dashboard › {screen.title}</Text>
      {screen.error ? (
        <Text color="red">{screen.error}</Text>
      ) : screen.body === null ? (
        <Text color="cyan">Loading…</Text>
      ) : (
        screen.body.split('\n').map((line, index) => (
          <Text key={index} wrap="truncate-end">
            {line}
          </Text>
        ))
      )}
      <Text dimColor>Esc or q: back to the dashboard</Text>
    </Box>
  );
}

export function QuotaBar({ used, limit, width = 30 }: { used: number; limit: number; width?: number }) {
  const ratio = limit > 0 ? used / limit : 1;
  const filled = Math.min(width, Math.round(Math.min(ratio, 1) * width));
  const colour = ratio > 1 ? 'red' : ratio >= 0.8 ? 'yellow' : 'green';
  return (
    <Text>
      <Text color={colour}>{'█'.repeat(filled)}</Text>
      <Text dimColor>{'░'.repeat(width - filled)}</Text>
      <Text>
        {' '}
        {used} / {limit} ({Math.floor(ratio * 100)} %)
      </Text>
    </Text>
  );
}

/** The outbound MTA's spool in the queues panel; `o` opens it per destination. */
function OutboundLine({ outbound }: { outbound: QueuesHealth['outbound'] }) {
  return (
    <Text wrap="truncate-end">
      {' '}
      {'outbound'.padEnd(12)} queued {String(outbound.queued).padStart(3)} deferred {outbound.deferred} in flight{' '}
      {outbound.inFlight}
      {outbound.heldDestinations ? <Text color="yellow"> {outbound.heldDestinations} held</Text> : null}
      {outbound.stuck ? <Text color="red"> stuck</Text> : null}
      {outbound.resolverUnhealthy?.length ? <Text color="red"> resolver unhealthy (mail deferred)</Text> : null}
    </Text>
  );
}

function Failed({ panel }: { panel: Panel<unknown> }) {
  return panel.error ? <Text color="red"> {panel.error}</Text> : null;
}

/** A queue worth a line of its own in a short terminal: it holds, runs or failed jobs. */
function queueHasWork(queue: QueueStats): boolean {
  return queue.depth > 0 || queue.running > 0 || queue.failed > 0 || queue.stuck;
}

export function Dashboard(props: DashboardProps) {
  const { views } = props;
  const [inner, setInner] = useState<Inner | null>(null);
  const back = () => setInner(null);
  const open = (action: DashboardAction, label: string) => {
    if (!views) return props.onAction(action);
    if (action === 'logs:tail') return setInner({ kind: 'log' });
    if (action === 'queue' && views.queue) return setInner({ kind: 'queue' });
    if (action === 'tenants:use') {
      setInner({ kind: 'tenants', items: null });
      views.tenants().then(
        (items) => setInner({ kind: 'tenants', items }),
        (error: Error) => setInner({ kind: 'tenants', items: [], error: error.message }),
      );
      return;
    }
    setInner({ kind: 'text', title: label, body: null });
    views.text(action).then(
      (body) =>
        setInner((current) => (current?.kind === 'text' && current.title === label ? { ...current, body } : current)),
      (error: Error) =>
        setInner((current) =>
          current?.kind === 'text' && current.title === label ? { ...current, error: error.message } : current,
        ),
    );
  };
  if (views && inner?.kind === 'text') return <TextScreen screen={inner} onBack={back} />;
  if (views && inner?.kind === 'log') return <LogTail {...views.logTail} onExit={back} exitLabel="back" />;
  if (views?.queue && inner?.kind === 'queue') return <QueueScreen {...views.queue} onExit={back} exitLabel="back" />;
  if (views && inner?.kind === 'tenants') {
    if (inner.error)
      return (
        <TextScreen screen={{ kind: 'text', title: 'switch tenant', body: null, error: inner.error }} onBack={back} />
      );
    if (!inner.items) return <Text color="cyan">Loading tenants…</Text>;
    return (
      <Picker
        title="Choose the tenant to act in"
        items={inner.items}
        onCancel={back}
        onPick={(id) => void views.useTenant(id).then(back, back)}
      />
    );
  }
  return <Overview {...props} open={open} />;
}

function Overview({
  load,
  onExit,
  refreshMs = 5000,
  open,
  columns,
  rows,
}: DashboardProps & { open: (action: DashboardAction, label: string) => void }) {
  const size = useTerminalSize({ columns, rows });
  const width = Math.max(20, size.columns - 1);
  // Small terminals: no blank lines between panels, and only the recent sends that fit.
  const compact = size.rows < 30;
  const gap = compact ? 0 : 1;
  const { value: data, failure, refresh } = usePolling(load, refreshMs);

  useInput((input, key) => {
    if (input === 'q' || key.escape) return onExit();
    if (input === 'r') return refresh();
    const action = DASHBOARD_ACTIONS[input as keyof typeof DASHBOARD_ACTIONS];
    if (action) open(action.command, action.label);
  });

  const tenant = data?.tenant.value;
  const sending = tenant ? sendingStateOf(tenant) : null;
  // Lines other than recent sends: title, quota (2), queues (title, each, outbound), recent title,
  // webhooks (1 + each), help, gaps.
  const queues = data?.queues.value ? Object.entries(data.queues.value.queues) : [];
  const outboundLines = data?.queues.value?.outbound ? 1 : 0;
  const hookLines = Math.max(1, data?.failingWebhooks.value?.length ?? 1);
  // Warnings: in a small terminal one truncated line each (the fix is in `svc doctor`); else two and a gap.
  const warningLines = (data?.warnings.value?.length ?? 0) * (compact ? 1 : 3);
  const otherLines = (queueLines: number) =>
    1 +
    (sending ? 1 : 0) +
    warningLines +
    2 +
    1 +
    queueLines +
    outboundLines +
    1 +
    1 +
    hookLines +
    (data?.inbound ? 1 + (data.inbound.value ? failingInboundTexts(data.inbound.value).length : 0) : 0) +
    1 +
    gap * 5;
  // A terminal too short for every queue and one recent send shows the queues with work, and one line
  // for the idle ones: the title and the key help stay on screen (60×15, test/tty/run-tmux.sh).
  const tight = otherLines(Math.max(1, queues.length)) + 1 > size.rows;
  const shownQueues = tight ? queues.filter(([, queue]) => queueHasWork(queue)) : queues;
  const idleQueues = queues.length - shownQueues.length;
  const queueLines = data?.queues.value ? shownQueues.length + (idleQueues > 0 ? 1 : 0) : 1;
  const recentRows = Math.max(1, size.rows - otherLines(queueLines) - 1);
  return (
    <Box flexDirection="column" width={width}>
      <Text bold wrap="truncate-end">
        svc dashboard{tenant ? ` · ${tenant.name}` : ''}
        {tenant ? (
          <Text dimColor>
            {' '}
            ({tenant.plan}
            {tenant.status !== 'active' ? `, ${tenant.status}` : ''})
          </Text>
        ) : null}
      </Text>
      {failure ? <Text color="red">{failure}</Text> : null}
      {sending ? <Text color={sending.level === 'paused' ? 'red' : 'yellow'}>! {sending.message}</Text> : null}
      {!data ? (
        <Text color="cyan">Loading…</Text>
      ) : (
        <Box flexDirection="column">
          {data.warnings.value?.map((warning) =>
            compact ? (
              <Text key={warning.code} color="yellow" wrap="truncate-end">
                ! {warning.message}
              </Text>
            ) : (
              <Box key={warning.code} marginTop={1} flexDirection="column">
                <Text color="yellow">! {warning.message}</Text>
                <Text dimColor> Fix: {warning.fix}</Text>
              </Box>
            ),
          )}
          <Box marginTop={gap} flexDirection="column">
            <Text bold>Quota this month</Text>
            {data.quota.value ? (
              <Box>
                <Text> </Text>
                <QuotaBar used={data.quota.value.used} limit={data.quota.value.limit} />
              </Box>
            ) : (
              <Failed panel={data.quota} />
            )}
          </Box>
          <Box marginTop={gap} flexDirection="column">
            <Text bold>Queues</Text>
            {data.queues.value ? (
              shownQueues.map(([name, queue]) => (
                <Text key={name} wrap="truncate-end">
                  {' '}
                  {name.padEnd(12)} depth {String(queue.depth).padStart(4)} running {String(queue.running).padStart(3)}{' '}
                  failed <Text color={queue.failed ? 'red' : undefined}>{queue.failed}</Text>
                  {queue.stuck ? <Text color="red"> stuck</Text> : null}
                </Text>
              ))
            ) : (
              <Failed panel={data.queues} />
            )}
            {idleQueues > 0 ? (
              <Text dimColor wrap="truncate-end">
                {' '}
                {shownQueues.length ? `${idleQueues} more idle` : `all ${idleQueues} idle`}
              </Text>
            ) : null}
            {/* A daemon older than the outbound MTA answers without it. */}
            {data.queues.value?.outbound ? <OutboundLine outbound={data.queues.value.outbound} /> : null}
          </Box>
          <Box marginTop={gap} flexDirection="column">
            <Text bold>Recent sends</Text>
            {data.recent.value?.length === 0 ? <Text dimColor> Nothing sent yet.</Text> : null}
            {data.recent.value?.slice(0, recentRows).map((log) => (
              <Text key={log.id} wrap="truncate-end">
                {' '}
                <Text color={STATUS_COLOURS[log.status]}>{log.status.padEnd(10)}</Text>{' '}
                {fit(log.to.join(', '), Math.min(30, Math.floor((width - 14) / 2)))} <Text dimColor>{log.subject}</Text>
              </Text>
            ))}
            <Failed panel={data.recent} />
          </Box>
          <Box marginTop={gap} flexDirection="column">
            <Text bold>Failing webhooks</Text>
            {data.failingWebhooks.value?.length === 0 ? <Text color="green"> None.</Text> : null}
            {data.failingWebhooks.value?.map((endpoint) => (
              <Text key={endpoint.id} wrap="truncate-end">
                {' '}
                <Text color="red">
                  {endpoint.enabled
                    ? `${endpoint.consecutiveFailures} failures`
                    : `off (${endpoint.disabledReason ?? 'disabled'})`}
                </Text>{' '}
                {endpoint.url}
              </Text>
            ))}
            <Failed panel={data.failingWebhooks} />
            {data.inbound ? (
              <Text wrap="truncate-end">
                <Text bold>Inbound 24 h </Text>
                {data.inbound.value ? (
                  <Text color={data.inbound.value.last24h.failed ? 'red' : undefined}>
                    {inboundDayText(data.inbound.value)}
                  </Text>
                ) : (
                  <Text color="red">{data.inbound.error}</Text>
                )}
              </Text>
            ) : null}
            {data.inbound?.value
              ? failingInboundTexts(data.inbound.value).map((text) => (
                  <Text key={text} wrap="truncate-end">
                    {' '}
                    <Text color="red">failing</Text> {text}
                  </Text>
                ))
              : null}
          </Box>
        </Box>
      )}
      <Box marginTop={gap}>
        <Text dimColor wrap="truncate-end">
          {width >= 100
            ? `${Object.entries(DASHBOARD_ACTIONS)
                .map(([key, action]) => `${key} ${action.label}`)
                .join(' · ')} · r refresh · q quit`
            : `q quit · r refresh · ${Object.entries(DASHBOARD_ACTIONS)
                .map(([key, action]) => `${key} ${action.label.split(' ').pop()}`)
                .join(' · ')}`}
        </Text>
      </Box>
    </Box>
  );
}
