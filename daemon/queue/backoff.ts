// How long to wait before the next attempt: exponential with jitter, so a burst of failures
// (a relay down for a minute) does not come back as a burst.
export function backoffDelayMs(attemptsSoFar: number, baseMs: number, maxMs = 6 * 60 * 60_000): number {
  const exponential = baseMs * 2 ** Math.min(attemptsSoFar, 30);
  const capped = Math.min(maxMs, exponential);
  // ±20 % so that retries of jobs that failed together spread out.
  return Math.round(capped * (0.8 + Math.random() * 0.4));
}
