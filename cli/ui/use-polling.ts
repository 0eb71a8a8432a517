// The live screens (dashboard, outbound queue, IP pools) show what a load answers and load again every
// `refreshMs`; `refresh()` loads at once (the `r` key, or after an action changed what is shown). An
// answer that arrives after the screen moved on (a newer load started, or the screen closed) is
// dropped, so a slow older answer never overwrites a newer one.
import { useCallback, useEffect, useState } from 'react';
import { errorText } from '../../daemon/errors.ts';

export interface Polled<T> {
  /** The last answer; null until the first arrives. */
  value: T | null;
  /** Why the last load failed; null once one succeeds. */
  failure: string | null;
  refresh(): void;
}

export function usePolling<T>(load: () => Promise<T>, refreshMs: number, initial: T | null = null): Polled<T> {
  const [value, setValue] = useState<T | null>(initial);
  const [failure, setFailure] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    load().then(
      (next) => live && (setValue(next), setFailure(null)),
      (error: unknown) => live && setFailure(errorText(error)),
    );
    const timer = setTimeout(() => setTick((count) => count + 1), refreshMs);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [tick, load, refreshMs]);
  const refresh = useCallback(() => setTick((count) => count + 1), []);
  return { value, failure, refresh };
}
