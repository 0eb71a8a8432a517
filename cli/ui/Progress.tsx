// A live progress bar fed by an async stream of states (a campaign expanding, a file uploading).
// It ends by itself when the stream ends; q or Esc stops watching (the work goes on server-side).
import React, { useEffect, useState } from 'react';
import { Box, Text, useInput } from 'ink';

export interface ProgressState {
  /** Units done and the total (null when unknown: the bar is drawn empty). */
  done: number;
  total: number | null;
  /** e.g. "4,000 / 10,000 contacts" */
  label: string;
  /** A second line: status, rates, the last error. */
  detail?: string;
}

export interface ProgressProps {
  title: string;
  updates: AsyncIterable<ProgressState>;
  onEnd: (last: ProgressState | null) => void;
}

const WIDTH = 40;

export function progressBar(done: number, total: number | null, width = WIDTH): string {
  const ratio = total && total > 0 ? Math.min(1, done / total) : 0;
  const filled = Math.round(ratio * width);
  return `${'█'.repeat(filled)}${'░'.repeat(width - filled)} ${total ? `${Math.floor(ratio * 100)}%` : ''}`.trimEnd();
}

export function Progress({ title, updates, onEnd }: ProgressProps) {
  const [state, setState] = useState<ProgressState | null>(null);
  useInput((input, key) => {
    if (input === 'q' || key.escape) onEnd(state);
  });
  useEffect(() => {
    let last: ProgressState | null = null;
    let stopped = false;
    void (async () => {
      for await (const next of updates) {
        if (stopped) return;
        last = next;
        setState(next);
      }
      if (!stopped) onEnd(last);
    })();
    return () => {
      stopped = true;
    };
  }, [updates]);
  return (
    <Box flexDirection="column">
      <Text bold>{title}</Text>
      <Text color="cyan">{progressBar(state?.done ?? 0, state?.total ?? null)}</Text>
      <Text>{state?.label ?? 'starting…'}</Text>
      {state?.detail ? <Text dimColor>{state.detail}</Text> : null}
      <Text dimColor>q stops watching (the work goes on)</Text>
    </Box>
  );
}
