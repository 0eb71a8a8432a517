// The one way tests wait: on a condition, polled, with a timeout that names what was awaited.
export interface WaitOptions {
  /** How long to wait before failing; 20 s unless told. */
  timeoutMs?: number;
  /** How often to check; 50 ms unless told. */
  intervalMs?: number;
  /** What to add to the timeout error, e.g. a process's output so far. */
  details?: () => string;
}

/** Resolves once `check` holds; throws "timed out after N ms waiting for <what>" otherwise. */
export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  { timeoutMs = 20_000, intervalMs = 50, details }: WaitOptions = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() >= deadline) {
      const more = details ? `:\n${details()}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${more}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * Lets `ms` pass when that is the point of the test: nothing (a retry, a reclaim, a second
 * notification) may happen within it. Say at the call what must not happen; wait on a condition
 * with waitFor everywhere else.
 */
export async function nothingWithin(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}
