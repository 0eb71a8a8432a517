// The signed message of each spool row, handed in memory from the thread that spools it to this
// process's MTA thread (a BroadcastChannel between worker threads), so the MTA's claim reads the rows
// without their messages. The message is written to the spool row all the same, and read from there
// when it is not here: after a crash or a restart, by another node's MTA, on a retry, past the bound.
// Why: node-postgres reads results as text only, so a bytea comes as hex, twice its size; encoding it
// cost PostgreSQL ~0.5–0.8 ms of CPU per 100 KB message and decoding it ~15 % of the MTA thread's busy
// time in bench:mta (docs/mta.md "Performance"). The read from the spool asks for base64 instead (half
// the encoding time in psql, 1.33× the size).
import { BroadcastChannel } from 'node:worker_threads';

const CHANNEL = 'svc:mta:spooled-messages';

/** Messages held for the MTA thread at most, oldest dropped first: a larger backlog is read from the spool. */
export const SPOOLED_MESSAGES_MAX_BYTES = 64 * 1024 * 1024;

interface Announcement {
  ids: string[];
  message: Uint8Array;
}

/** What the claim takes a row's message from (claimSpool in mta/sql/spool.ts). */
export interface SpooledMessageSource {
  /** The message of spool row `id`, handed over once: a later claim of the row reads the spool. */
  take(id: string): Buffer | undefined;
}

/** A spooling thread's side: tells this process's MTA thread the message of rows about to be spooled. */
export class SpooledMessageAnnouncer {
  private channel: BroadcastChannel | null = null;

  /** Before the insert, so the message is there when the insert's NOTIFY wakes the MTA loop. */
  announce(ids: string[], message: Buffer): void {
    if (!this.channel) {
      this.channel = new BroadcastChannel(CHANNEL);
      // Posting keeps no thread alive.
      this.channel.unref();
    }
    // A clone copies the view's whole ArrayBuffer: a small message sliced from Node's shared pool is copied out first.
    const whole = message.byteOffset === 0 && message.byteLength === message.buffer.byteLength;
    this.channel.postMessage({ ids, message: whole ? message : new Uint8Array(message) } satisfies Announcement);
  }

  close(): void {
    this.channel?.close();
    this.channel = null;
  }
}

/** The MTA thread's side: the messages announced in this process, by spool row id, at most `maxBytes`. */
export class SpooledMessages implements SpooledMessageSource {
  private readonly byId = new Map<string, Buffer>();
  private bytes = 0;
  private readonly channel = new BroadcastChannel(CHANNEL);

  constructor(private readonly maxBytes = SPOOLED_MESSAGES_MAX_BYTES) {
    this.channel.onmessage = (event) => this.add((event as { data: Announcement }).data);
    this.channel.unref();
  }

  take(id: string): Buffer | undefined {
    const message = this.byId.get(id);
    if (message === undefined) return undefined;
    this.byId.delete(id);
    this.bytes -= message.length;
    return message;
  }

  /** Messages held now, and their bytes (a message of several rows counts once per row). */
  get size(): { messages: number; bytes: number } {
    return { messages: this.byId.size, bytes: this.bytes };
  }

  close(): void {
    this.channel.close();
    this.byId.clear();
    this.bytes = 0;
  }

  private add({ ids, message }: Announcement): void {
    // The structured clone arrives as a Uint8Array: a Buffer over the same memory, not a copy.
    const buffer = Buffer.from(message.buffer, message.byteOffset, message.byteLength);
    if (buffer.length > this.maxBytes) return;
    for (const id of ids) {
      this.byId.set(id, buffer);
      this.bytes += buffer.length;
    }
    // A Map iterates in insertion order: the oldest go first.
    for (const [id, held] of this.byId) {
      if (this.bytes <= this.maxBytes) break;
      this.byId.delete(id);
      this.bytes -= held.length;
    }
  }
}
