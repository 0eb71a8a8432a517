// Group commit for plain accepts. The exact quota makes one tenant's accepts serialize on its
// counter row from the reservation to the commit (insert-accepted.ts), so at 64 concurrent sends of
// one tenant each statement waited for the commits of all before it: a few hundred sends a second
// whatever the CPU. Here, while a statement for a tenant is in flight, the next sends of that
// tenant on this node wait and then go together as ONE statement (one reservation of their sum,
// one commit). A send alone is not delayed: it goes at once when nothing of its tenant is in flight.
//
// A group is all or nothing in the database; when it does not go through whole (the state moved,
// the quota cannot take the sum, an error), each of its sends is run again alone, in order, so
// every send still gets its own exact answer: the 11th of 40 concurrent sends with a cap of 11 is
// accepted and the 12th refused, as without grouping.
import type { Sql } from '../../db/sql.ts';
import {
  insertAcceptedSends,
  type AcceptedSend,
  type InsertAcceptedOptions,
  type InsertOutcome,
} from './insert-accepted.ts';

/** The most rows one grouped statement carries (bodies travel as one jsonb parameter). */
const MAX_GROUP_ROWS = 100;

export interface AcceptGroups {
  /** Like insertAcceptedSends on the pool (no transaction), grouped with concurrent sends of the same tenant and state. */
  insert(sends: AcceptedSend[], options: InsertAcceptedOptions): Promise<InsertOutcome>;
}

interface Waiting {
  sends: AcceptedSend[];
  options: InsertAcceptedOptions;
  resolve(outcome: InsertOutcome): void;
  reject(error: unknown): void;
}

interface Lane {
  running: boolean;
  waiting: Waiting[];
}

const timeOf = (date: Date | null | undefined) => (date ? String(date.getTime()) : '');

/**
 * Sends can share a statement when everything but their rows and their count is the same. Built by
 * hand: JSON.stringify of the options (Dates through toISOString) was ~3 % of the accept path's CPU.
 * Every field is named, so a new option fails to compile here until it is part of the key.
 */
export function laneKey(options: InsertAcceptedOptions): string {
  const {
    counted: _counted,
    tenantId,
    apiKeyId,
    testMode,
    quotaCap,
    cycleStart,
    runAt,
    maxAttempts,
    jobKeyPrefix,
    expected,
    ...unkeyed
  } = options;
  const { plan, monthlyLimit, cycleStartedAt, senderDomains, checkKey, ...unkeyedExpected } = expected;
  const none: Record<string, never> = { ...unkeyed, ...unkeyedExpected };
  void none;
  // Uuids, numbers, flags and domain names hold no newline; the plan and prefix are JSON-quoted.
  return [
    tenantId,
    apiKeyId ?? '',
    testMode,
    quotaCap,
    timeOf(cycleStart),
    timeOf(runAt),
    maxAttempts,
    JSON.stringify(jobKeyPrefix),
    JSON.stringify(plan),
    monthlyLimit ?? '',
    timeOf(cycleStartedAt),
    checkKey,
    senderDomains === null ? '-' : senderDomains.join(' '),
  ].join('\n');
}

export function createAcceptGroups(sql: Sql): AcceptGroups {
  const lanes = new Map<string, Lane>();

  async function runAlone(item: Waiting): Promise<void> {
    try {
      item.resolve(await insertAcceptedSends(sql, item.sends, item.options));
    } catch (error) {
      item.reject(error);
    }
  }

  async function runGroup(group: Waiting[]): Promise<void> {
    if (group.length === 1) return runAlone(group[0]);
    const sends = group.flatMap((item) => item.sends);
    const counted = group.reduce((sum, item) => sum + item.options.counted, 0);
    let outcome: InsertOutcome | null = null;
    try {
      outcome = await insertAcceptedSends(sql, sends, { ...group[0].options, counted });
    } catch {
      // One send's rows may be what failed: each is run alone below and gets its own answer.
    }
    if (outcome && outcome.fresh && outcome.inserted === sends.length) {
      for (const item of group) item.resolve({ fresh: true, inserted: item.sends.length, used: outcome.used });
      return;
    }
    for (const item of group) await runAlone(item);
  }

  async function drain(key: string, lane: Lane): Promise<void> {
    while (lane.waiting.length > 0) {
      const group: Waiting[] = [];
      let rows = 0;
      while (lane.waiting.length > 0 && (group.length === 0 || rows + lane.waiting[0].sends.length <= MAX_GROUP_ROWS)) {
        const next = lane.waiting.shift()!;
        rows += next.sends.length;
        group.push(next);
      }
      await runGroup(group);
    }
    lane.running = false;
    lanes.delete(key);
  }

  return {
    insert(sends, options) {
      return new Promise<InsertOutcome>((resolve, reject) => {
        const key = laneKey(options);
        let lane = lanes.get(key);
        if (!lane) lanes.set(key, (lane = { running: false, waiting: [] }));
        lane.waiting.push({ sends, options, resolve, reject });
        if (lane.running) return;
        lane.running = true;
        void drain(key, lane);
      });
    },
  };
}
