// The terminal's size, followed on resize, so screens lay out for it (truncate, never wrap).
import { useEffect, useState } from 'react';
import { useStdout } from 'ink';

export interface TerminalSize {
  columns: number;
  rows: number;
}

/** `override` fixes the size (tests, or a caller that knows better). */
export function useTerminalSize(override: Partial<TerminalSize> = {}): TerminalSize {
  const { stdout } = useStdout();
  const read = () => ({
    columns: override.columns ?? (stdout.columns || 80),
    rows: override.rows ?? (stdout.rows || 24),
  });
  const [size, setSize] = useState(read);
  useEffect(() => {
    const update = () => setSize(read());
    stdout.on('resize', update);
    return () => {
      stdout.off('resize', update);
    };
  });
  return override.columns !== undefined || override.rows !== undefined ? read() : size;
}

/** Cuts a plain string to `width` characters, marking the cut with an ellipsis. */
export function fit(text: string, width: number): string {
  if (width <= 0) return '';
  return text.length <= width ? text.padEnd(width) : `${text.slice(0, Math.max(0, width - 1))}…`;
}
