// A floor under the old generation's GC limit of the worker threads' V8 heaps.
//
// V8 counts ArrayBuffer memory allocated since the last full (mark-compact) GC against the old
// generation's limit, and sets that limit from the live heap (×1.1–4 after each full GC). The MTA
// thread's live heap is small (~22 MB) while each message it delivers brings ~100 KB of Buffers (the
// message handed over by the send thread, its DATA chunks) that live through the SMTP transaction, long
// enough to outlive two scavenges: their memory is then freed only by a full GC, and the ~23 MB of slack
// filled within ~150 ms. bench:mta's MTA thread ran a mark-compact 6–7 times a second (206 in one
// 20,000-message run), and V8's marking threads took ~9 % of the machine's CPU. With this floor the
// limit does not fall below 128 MB, and a full GC comes when the heap has grown by that much. It is a
// limit, not a reservation: an idle thread's heap stays as small as it was, and a thread whose own
// maxOldGenerationSizeMb is lower (the JSX sandbox: 64 MB) keeps its bound (V8 takes the smaller).
import { setFlagsFromString } from 'node:v8';

export const WORKER_OLD_GENERATION_FLOOR_MB = 128;

/**
 * Applies the floor to every V8 heap this process creates from now on (V8 flags are process-wide and
 * read when a thread's heap is set up): call it before the worker threads start.
 */
export function applyWorkerOldGenerationFloor(): void {
  // Setting it again (a restarted pool, a second daemon in one test process) changes nothing.
  setFlagsFromString(`--initial-old-space-size=${WORKER_OLD_GENERATION_FLOOR_MB}`);
}
