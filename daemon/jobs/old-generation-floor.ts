// A floor under the old generation's GC limit of the daemon's own worker threads' V8 heaps.
//
// V8 counts ArrayBuffer memory allocated since the last full (mark-compact) GC against the old
// generation's limit, and sets that limit from the live heap (×1.1–4 after each full GC). The MTA
// thread's live heap is small (~22 MB) while each message it delivers brings ~100 KB of Buffers (the
// message handed over by the send thread, its DATA chunks) that live through the SMTP transaction, long
// enough to outlive two scavenges: their memory is then freed only by a full GC, and the ~23 MB of slack
// filled within ~150 ms. bench:mta's MTA thread ran a mark-compact 6–7 times a second (206 in one
// 20,000-message run), and V8's marking threads took ~9 % of the machine's CPU. With this floor the
// limit does not fall below 128 MB. It is a limit, not a reservation: an idle thread's heap stays as
// small as it was.
//
// V8 flags are process-wide and read when a thread's heap is set up, so the flag is on only while the
// worker pool creates its threads and off again once each is online: the threads made on demand later
// (the inbound report reader, the JSX sandbox) keep V8's own sizing, where the floor let a reader's
// garbage reach 84 MB of RSS before a full GC (test/dmarc-bombs.test.ts allows 50).
import { setFlagsFromString } from 'node:v8';
import type { Worker } from 'node:worker_threads';

export const WORKER_OLD_GENERATION_FLOOR_MB = 128;
/** Longest the flag stays on waiting for a thread to come online (one that never does is not waited for). */
const ONLINE_TIMEOUT_MS = 10_000;

function setFloor(megabytes: number): void {
  // 0 is V8's "not set": its default sizing.
  setFlagsFromString(`--initial-old-space-size=${megabytes}`);
}

/** Resolves when `worker` runs (its heap is set up), exits, fails, or after ONLINE_TIMEOUT_MS. */
function online(worker: Worker): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ONLINE_TIMEOUT_MS);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    worker.once('online', done);
    worker.once('exit', done);
    worker.once('error', done);
  });
}

/**
 * Runs `start` with the floor on; `watch` is called with each thread it creates, at once (before the
 * thread can come online). The floor is switched off when every such thread is online.
 */
export async function withOldGenerationFloor(
  start: () => Promise<void>,
  watch: (onCreated: (worker: Worker) => void) => () => void,
): Promise<void> {
  const onlines: Array<Promise<void>> = [];
  const unwatch = watch((worker) => onlines.push(online(worker)));
  setFloor(WORKER_OLD_GENERATION_FLOOR_MB);
  try {
    await start();
    await Promise.all(onlines);
  } finally {
    unwatch();
    setFloor(0);
  }
}
