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
import { createGroupCommit } from '../../db/group-commit.ts';
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

interface Accept {
  sends: AcceptedSend[];
  options: InsertAcceptedOptions;
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
    spoolExpiryHours,
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
    spoolExpiryHours ?? '-',
  ].join('\n');
}

/** Each accept's own statement and answer, in order. */
async function insertAlone(sql: Sql, accepts: Accept[]): Promise<Array<PromiseSettledResult<InsertOutcome>>> {
  const outcomes: Array<PromiseSettledResult<InsertOutcome>> = [];
  for (const accept of accepts) {
    try {
      outcomes.push({ status: 'fulfilled', value: await insertAcceptedSends(sql, accept.sends, accept.options) });
    } catch (error) {
      outcomes.push({ status: 'rejected', reason: error });
    }
  }
  return outcomes;
}

/** One statement for the group; when it does not go through whole, each accept alone (see the top of the file). */
async function insertGroup(sql: Sql, group: Accept[]): Promise<Array<PromiseSettledResult<InsertOutcome>>> {
  if (group.length === 1) return insertAlone(sql, group);
  const sends = group.flatMap((accept) => accept.sends);
  const counted = group.reduce((sum, accept) => sum + accept.options.counted, 0);
  let outcome: InsertOutcome | null = null;
  try {
    outcome = await insertAcceptedSends(sql, sends, { ...group[0].options, counted });
  } catch {
    // One send's rows may be what failed: each is run alone below and gets its own answer.
  }
  if (outcome && outcome.fresh && outcome.inserted === sends.length) {
    const used = outcome.used;
    return group.map((accept) => ({
      status: 'fulfilled',
      value: { fresh: true, inserted: accept.sends.length, used },
    }));
  }
  return insertAlone(sql, group);
}

export function createAcceptGroups(sql: Sql): AcceptGroups {
  const groups = createGroupCommit<Accept, InsertOutcome>({
    maxSize: MAX_GROUP_ROWS,
    sizeOf: (accept) => accept.sends.length,
    write: (group) => insertGroup(sql, group),
  });
  return { insert: (sends, options) => groups.submit({ sends, options }, laneKey(options)) };
}
