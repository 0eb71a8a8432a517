// Strangers' mail is parsed in threads of the inbound listener's own, one message at a time each: on the
// event loop, MIME of a 2 MB message took 40–60 ms (readReport) and mailparser on 15 MB held it
// ~100 ms, fast-xml-parser takes ~0.3 s per MB of report, and a zip bomb's inflation is CPU however
// well it is capped. The loop only hands over the message's chunks as they came off the socket
// (their buffers transferred, not copied: a 15 MB message cost the loop 95 ms when it was joined and
// cloned here) and awaits plain data (reader-thread.ts), DKIM verification included.
// A message that runs past READ_TIMEOUT_MS or exhausts the thread's heap costs only that thread,
// which is replaced; that message is refused (UnreadableMessageError), the queue goes on.
import { Worker } from 'node:worker_threads';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { AttachmentOutcome } from '../dmarc/attachments.ts';
import type { DkimSignatures } from './feedback-auth.ts';
import type { ReportMessage } from './mime.ts';
import type { RoutedRead, RoutedWanted } from '../inbound-routing/parse.ts';

/** What to read besides the report structure, decided by the recipients before the message is sent over. */
export interface ReadWanted {
  /**
   * The header and MIME leaf parts (mime.ts readReport), for the readers of our own addresses. Not for a
   * message only routed: each part decoded to text and walked, cloned and cut here cost the thread and
   * the loop a few ms a message, for nothing (issue 52 §5).
   */
  report: boolean;
  /** The DMARC reports attached (dmarc/attachments.ts). */
  dmarc: boolean;
  /** The candidate unsubscribe tokens in the subject and plain text (where the mailto puts its token). */
  unsubscribeTokens: boolean;
  /** When set and the message is an ARF report: its DKIM signatures checked, keys looked up on these servers. */
  feedbackSignatures: { dnsServers: string[] } | null;
  /** When a tenant's route took a recipient: the session's facts for the verdicts (inbound-routing/parse.ts). */
  routed: RoutedWanted | null;
}
export interface ReadMessage {
  /** The message's header and MIME leaf parts (mime.ts readReport), each body cut at READ_PART_MAX_CHARS; when wanted. */
  report: ReportMessage | null;
  dmarc: AttachmentOutcome[] | null;
  unsubscribeTokens: string[] | null;
  /** Only for an ARF report when `wanted.feedbackSignatures` was set (feedback-auth.ts judges them). */
  feedbackSignatures: DkimSignatures | null;
  /** The parsed form, verdicts, cleaned gzipped source and attachment bytes, when `wanted.routed` was set. */
  routed: RoutedRead | null;
}
export interface ReaderRequest {
  id: number;
  /** The raw message in the order it arrived; each chunk's buffer is transferred with the request. */
  chunks: Uint8Array[];
  wanted: ReadWanted;
}
export type ReaderResponse =
  | { id: number; result: ReadMessage }
  | { id: number; error: string }
  /** Sent once, when the thread has loaded its modules: a message's time limit runs from then. */
  | { ready: true };

export interface InboundReader {
  /**
   * One message read in the reader's thread. The chunks' buffers are moved to the thread, not copied:
   * each must own its whole ArrayBuffer (see ownedChunk) and is unusable here afterwards.
   */
  read(chunks: Uint8Array[], wanted: ReadWanted): Promise<ReadMessage>;
  /**
   * Starts the thread now rather than at the first message, so that its modules load before mail comes
   * (a cold thread kept the first message waiting: 11–35 s at load average 25 through tsx, ~2.5 s of
   * CPU). A thread that ends is replaced at the next message, as before.
   */
  start(): void;
  close(): Promise<void>;
}

/** The message could not be read (too slow, too large for the thread's heap, or not parseable). */
export class UnreadableMessageError extends Error {}
/** The reader is closed or has too many messages waiting: the sender should retry (SMTP 451). */
export class ReaderBusyError extends Error {}

/**
 * What of each MIME part's body comes back to the event loop, where the report readers (reports.ts) run
 * their expressions on it: a DSN's status fields, an ARF block, an NDR's text and a returned message's
 * header all sit in the first kilobytes; a 15 MB body does not cross over whole.
 */
export const READ_PART_MAX_CHARS = 128 * 1024;

/** A real message is read in milliseconds; the worst a bounded attachment costs is a few seconds. */
export const READ_TIMEOUT_MS = 30_000;
/**
 * How long a new thread may take to load its modules, apart from READ_TIMEOUT_MS: on a loaded 2-core
 * VM (load average 25, sources run through tsx) a cold start took 11–35 s, and counted against the
 * first message it refused that message for good (554) and started the next thread cold again.
 */
const READER_BOOT_TIMEOUT_MS = 120_000;
/** Messages waiting for the thread; beyond this the SMTP sender is asked to retry. */
const MAX_WAITING_MESSAGES = 16;
/** Heap of the thread: a 20 MB report's parse tree fits; more ends the thread, not the daemon. */
const READER_OLD_GENERATION_MB = 512;
/** Small, as for the queue threads: large buffers and strings live outside it anyway (measured: 16 MB cost ~20 MB of RSS). */
const READER_YOUNG_GENERATION_MB = 4;

/**
 * A copy of a chunk that owns its ArrayBuffer, so that it can be transferred: a socket's chunk may be a
 * view into a buffer other chunks share. Copied as each chunk arrives, a few microseconds at a time.
 */
export function ownedChunk(chunk: Uint8Array): Uint8Array {
  return new Uint8Array(chunk);
}

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

interface Job {
  chunks: Uint8Array[];
  wanted: ReadWanted;
  resolve(result: ReadMessage): void;
  reject(error: Error): void;
}

/** One reader thread and the message it reads, if any. */
interface Slot {
  worker: Worker | null;
  /** The thread has answered `ready` (its modules loaded). */
  ready: boolean;
  current: (Job & { id: number; timer: NodeJS.Timeout }) | null;
}

/**
 * `threads` reader threads share one queue of waiting messages, each reading one message at a time
 * (INBOUND_READER_THREADS, config.ts). One thread used one core at most however idle the other was:
 * in bench:inbound it spent 3.3–4.0 ms of its own CPU a message (V8's helper threads more), a ceiling
 * near 250–300 messages a second before anything else the listener does (issue 52 §5). A thread that
 * breaks is replaced alone; the others go on.
 */
export function createInboundReader(options: { threads?: number } = {}): InboundReader {
  const threads = Math.max(1, Math.floor(options.threads ?? 1));
  const slots: Slot[] = Array.from({ length: threads }, () => ({ worker: null, ready: false, current: null }));
  const waiting: Job[] = [];
  let nextId = 1;
  let closed = false;

  const settle = (slot: Slot, outcome: { result: ReadMessage } | { error: Error }) => {
    const job = slot.current;
    if (!job) return;
    clearTimeout(job.timer);
    slot.current = null;
    if ('error' in outcome) job.reject(outcome.error);
    else job.resolve(outcome.result);
    startNext(slot);
  };
  const abandonThread = (slot: Slot, reason: string) => {
    // The thread is gone or stuck: the message it was reading is what broke it.
    const broken = slot.worker;
    slot.worker = null;
    void broken?.terminate();
    settle(slot, { error: new UnreadableMessageError(reason) });
  };
  const readTimer = (slot: Slot) =>
    setTimeout(
      () => abandonThread(slot, `reading the message took longer than ${READ_TIMEOUT_MS} ms`),
      READ_TIMEOUT_MS,
    );
  const spawn = (slot: Slot): Worker => {
    // The jobs' bootstrap registers tsx when the sources run unbuilt (tests), as for the Bree threads.
    const thread = new Worker(here('../../jobs/bootstrap.mjs'), {
      workerData: { module: pathToFileURL(here('./reader-thread.ts')).href },
      resourceLimits: {
        maxOldGenerationSizeMb: READER_OLD_GENERATION_MB,
        maxYoungGenerationSizeMb: READER_YOUNG_GENERATION_MB,
      },
    });
    thread.unref();
    slot.ready = false;
    thread.on('message', (response: ReaderResponse) => {
      if (slot.worker !== thread) return;
      if ('ready' in response) {
        slot.ready = true;
        // The message waiting for the boot gets its whole READ_TIMEOUT_MS from now.
        if (slot.current) {
          clearTimeout(slot.current.timer);
          slot.current.timer = readTimer(slot);
        }
        return;
      }
      if (!slot.current || response.id !== slot.current.id) return;
      settle(
        slot,
        'error' in response ? { error: new UnreadableMessageError(response.error) } : { result: response.result },
      );
    });
    thread.on('error', (error) => {
      if (slot.worker === thread) abandonThread(slot, `the message could not be read: ${error.message}`);
    });
    thread.on('exit', () => {
      if (slot.worker === thread) abandonThread(slot, 'the message could not be read: the reader thread stopped');
    });
    return thread;
  };
  /** The next waiting message to this idle slot's thread (started if it is not running). */
  function startNext(slot: Slot): void {
    if (closed || slot.current) return;
    const job = waiting.shift();
    if (!job) return;
    slot.worker ??= spawn(slot);
    const id = nextId++;
    const timer = slot.ready
      ? readTimer(slot)
      : setTimeout(
          () => abandonThread(slot, `the reader thread did not start within ${READER_BOOT_TIMEOUT_MS} ms`),
          READER_BOOT_TIMEOUT_MS,
        );
    slot.current = { ...job, id, timer };
    slot.worker.postMessage(
      { id, chunks: job.chunks, wanted: job.wanted } satisfies ReaderRequest,
      job.chunks.map((chunk) => chunk.buffer as ArrayBuffer),
    );
  }
  function read(chunks: Uint8Array[], wanted: ReadWanted): Promise<ReadMessage> {
    if (closed) return Promise.reject(new ReaderBusyError('the inbound reader is closed'));
    if (waiting.length >= MAX_WAITING_MESSAGES)
      return Promise.reject(new ReaderBusyError('too many inbound messages are waiting to be read'));
    return new Promise((resolve, reject) => {
      waiting.push({ chunks, wanted, resolve, reject });
      // A thread that has loaded its modules first: a cold one makes the message wait for its boot.
      const idle = slots.filter((slot) => !slot.current);
      const slot = idle.find((s) => s.worker && s.ready) ?? idle[0];
      if (slot) startNext(slot);
    });
  }

  return {
    read,
    start() {
      if (closed) return;
      for (const slot of slots) slot.worker ??= spawn(slot);
    },
    async close() {
      closed = true;
      for (const job of waiting.splice(0)) job.reject(new ReaderBusyError('the inbound reader is closed'));
      await Promise.all(
        slots.map(async (slot) => {
          if (slot.current) {
            clearTimeout(slot.current.timer);
            slot.current.reject(new ReaderBusyError('the inbound reader is closed'));
            slot.current = null;
          }
          const thread = slot.worker;
          slot.worker = null;
          await thread?.terminate();
        }),
      );
    },
  };
}
