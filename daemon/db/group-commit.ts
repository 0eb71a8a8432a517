// Group commit: items handed in while a write of their lane is in flight wait for it and then go
// together in the next write; an item alone is written at once (never delayed to wait for company).
// One write per lane at a time. Used where concurrent callers each need a small statement and its
// commit: the accept path's plain sends (emails/accept-groups.ts: a lane per tenant and state) and the
// MTA's answered marks (mta/sql/spool.ts: one lane per thread).

export interface GroupCommitOptions<Item, Result> {
  /**
   * Writes one group, answering each item's outcome in order (an item can fail alone). A throw fails
   * every item of the group with it.
   */
  write(items: Item[]): Promise<Array<PromiseSettledResult<Result>>>;
  /** The most one group holds, counted by sizeOf (an item larger than this goes alone). */
  maxSize: number;
  /** An item's size toward maxSize (default 1). */
  sizeOf?(item: Item): number;
}

export interface GroupCommit<Item, Result> {
  /** Resolves with the item's outcome once the write that carried it is done. `lane`: items that may share a write. */
  submit(item: Item, lane?: string): Promise<Result>;
}

interface Waiting<Item, Result> {
  item: Item;
  resolve(result: Result): void;
  reject(error: unknown): void;
}

export function createGroupCommit<Item, Result>(options: GroupCommitOptions<Item, Result>): GroupCommit<Item, Result> {
  const sizeOf = options.sizeOf ?? (() => 1);
  /** The lanes with a write in flight, and what waits for their next one. */
  const lanes = new Map<string, Array<Waiting<Item, Result>>>();

  async function write(group: Array<Waiting<Item, Result>>): Promise<void> {
    let outcomes: Array<PromiseSettledResult<Result>>;
    try {
      outcomes = await options.write(group.map((waiting) => waiting.item));
    } catch (error) {
      for (const waiting of group) waiting.reject(error);
      return;
    }
    group.forEach((waiting, index) => {
      const outcome = outcomes[index];
      if (outcome.status === 'fulfilled') waiting.resolve(outcome.value);
      else waiting.reject(outcome.reason);
    });
  }

  async function drain(lane: string, waiting: Array<Waiting<Item, Result>>): Promise<void> {
    while (waiting.length > 0) {
      const group: Array<Waiting<Item, Result>> = [];
      let size = 0;
      while (waiting.length > 0 && (group.length === 0 || size + sizeOf(waiting[0].item) <= options.maxSize)) {
        const next = waiting.shift()!;
        size += sizeOf(next.item);
        group.push(next);
      }
      await write(group);
    }
    lanes.delete(lane);
  }

  return {
    submit(item, lane = '') {
      return new Promise<Result>((resolve, reject) => {
        const running = lanes.get(lane);
        if (running) {
          running.push({ item, resolve, reject });
          return;
        }
        const waiting = [{ item, resolve, reject }];
        lanes.set(lane, waiting);
        void drain(lane, waiting);
      });
    },
  };
}
