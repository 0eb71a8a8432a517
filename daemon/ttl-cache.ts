// A small in-memory map whose entries expire: what a thread keeps of rarely changing rows (DKIM keys,
// verified domains, project relays) so that a burst of sends reads each once, and the MTA's DNS answers
// for their own TTLs. When it is full it is
// emptied rather than evicting one by one: it only ever saves a read.

export class TtlCache<T> {
  private readonly entries = new Map<string, { value: T; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    /** The clock entries expire by (tests move it). */
    private readonly now: () => number = Date.now,
  ) {}

  /** The value kept under `key`, unless it has expired. */
  get(key: string): T | undefined {
    const hit = this.entries.get(key);
    return hit && hit.expiresAt > this.now() ? hit.value : undefined;
  }

  /** Keeps `value` for the time to live (or this entry's own, `ttlMs`: a DNS answer's TTL), and answers it. */
  set(key: string, value: T, ttlMs = this.ttlMs): T {
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
    return value;
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  /** Drops every entry whose key starts with `prefix` (a tenant's, say). */
  deletePrefixed(prefix: string): void {
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) this.entries.delete(key);
  }
}

/**
 * The kept promise for `key`, or `load()`'s, kept in its place: sends that miss together share one read,
 * and a failed read is forgotten at once.
 */
export function cachedLoad<V>(cache: TtlCache<Promise<V>>, key: string, load: () => Promise<V>): Promise<V> {
  const hit = cache.get(key);
  if (hit) return hit;
  const value = load();
  value.catch(() => cache.delete(key));
  return cache.set(key, value);
}
