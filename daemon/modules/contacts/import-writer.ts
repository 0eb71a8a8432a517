// The CSV import's writer: up to CHUNKS_IN_FLIGHT chunks of rows written at once, yet every contact
// ends as the file's last row for it says, as if the chunks were written one after the other.
//
// Two chunks can only disagree about a contact they both read or change. What a chunk reads or changes
// is its footprint: its rows' emails and externalIds, and the emails and externalIds of the contacts
// those rows match when it starts (one lookup, which its first write wave then uses instead of its
// own). A write changes only contacts inside its footprint and gives them only keys of its rows, so
// a later chunk whose rows share no key with an earlier chunk's footprint can neither match a contact
// the earlier one changes nor see a different match because of it. A chunk therefore waits for the
// earlier chunks still in flight whose footprint shares a key with its rows (and for a free place),
// and runs beside the others. Files that name each contact once (the common case) run
// CHUNKS_IN_FLIGHT chunks at once; a file that repeats a contact across chunks orders just those.
//
// One chunk at a time, PostgreSQL's write (its share of a core) and this thread's parsing took turns:
// 5,500–7,400 contacts/s at 100,000 on a 2-core VM against 14,000–23,000 for the bulk API's 4
// requests in flight (bench:lists, issue 51 §1).
import type { Match } from './bulk.ts';
import type { UpsertContactBody } from '../../../shared/schemas/contacts.ts';

export const CHUNKS_IN_FLIGHT = 3;

interface Chunk {
  /** Resolves with the chunk's footprint once its lookup answered (null: the lookup failed). */
  footprint: Promise<Set<string> | null>;
  /** Settles when the chunk is written or failed; never rejects. */
  done: Promise<void>;
}

export interface ChunkWriterPorts<Row extends { body: UpsertContactBody }> {
  /** The contacts the rows match now (findMatches). */
  lookup(rows: Row[]): Promise<Match[]>;
  /** Writes the rows, given what `lookup` answered just before. */
  write(rows: Row[], matches: Match[]): Promise<void>;
}

const emailKey = (email: string) => `e:${email.toLowerCase()}`;
const externalKey = (externalId: string) => `x:${externalId}`;

function rowKeys(rows: { body: UpsertContactBody }[]): Set<string> {
  const keys = new Set<string>();
  for (const { body } of rows) {
    keys.add(emailKey(body.email));
    if (body.externalId !== undefined) keys.add(externalKey(body.externalId));
  }
  return keys;
}

function footprintOf(keys: Set<string>, matches: Match[]): Set<string> {
  const footprint = new Set(keys);
  for (const match of matches) {
    footprint.add(`e:${match.email_key}`);
    if (match.external_id !== null) footprint.add(externalKey(match.external_id));
  }
  return footprint;
}

const shareAKey = (a: Set<string>, b: Set<string>) => {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const key of small) if (large.has(key)) return true;
  return false;
};

export class ChunkWriter<Row extends { body: UpsertContactBody }> {
  /** Chunks written or being written, in the file's order. */
  private readonly inFlight = new Set<Chunk>();
  private failure: { error: unknown } | null = null;

  constructor(private readonly ports: ChunkWriterPorts<Row>) {}

  /**
   * Starts writing a chunk once the earlier chunks it depends on are written and a place is free;
   * resolves when it has started. Throws the error of a chunk that failed before.
   */
  async submit(rows: Row[]): Promise<void> {
    this.throwFailure();
    const keys = rowKeys(rows);
    for (const earlier of [...this.inFlight]) {
      const footprint = await earlier.footprint;
      if (footprint === null || shareAKey(footprint, keys)) await earlier.done;
    }
    while (this.inFlight.size >= CHUNKS_IN_FLIGHT) await Promise.race([...this.inFlight].map((chunk) => chunk.done));
    this.throwFailure();
    const looked = this.ports.lookup(rows);
    const chunk: Chunk = {
      footprint: looked.then(
        (matches) => footprintOf(keys, matches),
        () => null,
      ),
      done: looked
        .then((matches) => this.ports.write(rows, matches))
        .catch((error: unknown) => {
          this.failure ??= { error };
        })
        .finally(() => this.inFlight.delete(chunk)),
    };
    this.inFlight.add(chunk);
  }

  /** Waits for every chunk; throws the first failure. */
  async finish(): Promise<void> {
    await Promise.all([...this.inFlight].map((chunk) => chunk.done));
    this.throwFailure();
  }

  private throwFailure(): void {
    if (this.failure) throw this.failure.error;
  }
}
