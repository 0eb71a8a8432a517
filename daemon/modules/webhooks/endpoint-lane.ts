// One endpoint's lane in a webhook worker: the deliveries claimed for it, how many attempts it may
// have open at once (adaptive, AIMD), whether it asked us to pause (429 + Retry-After), and its
// keep-alive connections.
//
// The limit starts at INITIAL_IN_FLIGHT and, while the receiver answers 2xx within FAST_ANSWER_MS
// and deliveries are waiting for it, grows as TCP's window does: by one per answer (doubling per
// round trip, "slow start") until the first sign of overload, then by about one per round trip. It
// halves on a timeout, a network error, a 429 or a 5xx (which also ends the slow start at half the
// limit it had reached), never below 1 nor above the operator's ceiling
// (WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT, per worker thread). A slow or dead receiver therefore keeps
// a few attempts of its own open, never the slots of another endpoint.
//
// What a lane may hold is its own too: claims give each lane at most room() more deliveries (its
// free slots plus about two rounds of its limit waiting), so a slow endpoint's backlog stays in the
// table, not in the worker. A receiver that refuses connections UNREACHABLE_PAUSE_AFTER times in a
// row is left alone for a while (doubling up to MAX_UNREACHABLE_PAUSE_MS, reset by anything else): its
// waiting deliveries go back unattempted, so a dead endpoint costs an attempt per pause, not a
// stream of them.
import type http from 'node:http';
import type { Config } from '../../config.ts';
import { createKeepAliveAgent } from './http-post.ts';
import { resolveDeliveryTarget, type DeliveryTarget } from './url-guard.ts';

export const INITIAL_IN_FLIGHT = 4;
/** An answer slower than this does not grow the limit (it does not shrink it either). */
export const FAST_ANSWER_MS = 1_000;
/**
 * How long a checked target is reused before url-guard runs again. The check still precedes every
 * connection (the agent's sockets all go to the checked address); this only spares a DNS look-up
 * per attempt at hundreds of attempts a second.
 */
export const TARGET_RECHECK_MS = 1_000;
/** Longest pause a Retry-After can impose. */
export const MAX_PAUSE_MS = 60 * 60_000;

/** Claimed deliveries a lane may keep waiting for a slot: at least this, else two rounds of its limit. */
export const MIN_WAITING = 8;
/** Refused or broken connections in a row after which the lane pauses. */
export const UNREACHABLE_PAUSE_AFTER = 3;
/** The first such pause; each further unreachable answer doubles it. */
export const UNREACHABLE_PAUSE_MS = 1_000;
export const MAX_UNREACHABLE_PAUSE_MS = 60_000;

/** 'unreachable': no answer at all (connection refused, reset, broken off); not a timeout. */
export type AnswerKind = 'fast-success' | 'slow-success' | 'overloaded' | 'unreachable' | 'other';

/** The room of an endpoint that has no lane yet: a new lane's limit plus its waiting allowance. */
export function newLaneRoom(ceiling: number): number {
  return Math.min(INITIAL_IN_FLIGHT, ceiling) + MIN_WAITING;
}

export interface LaneDelivery {
  id: string;
}

export class EndpointLane<D extends LaneDelivery = LaneDelivery> {
  limit: number;
  inFlight = 0;
  readonly waiting: D[] = [];
  pausedUntil = 0;
  lastUsedAt = Date.now();
  /** Answers in a row that were no answer at all. */
  unreachableStreak = 0;
  /** Below this limit a fast answer adds one whole slot (slow start); lowered by overload. */
  slowStartBelow: number;
  private target: { value: DeliveryTarget; checkedAt: number; url: string } | null = null;
  private agent: { key: string; value: http.Agent } | null = null;

  constructor(
    readonly endpointId: string,
    readonly ceiling: number,
  ) {
    this.limit = Math.min(INITIAL_IN_FLIGHT, ceiling);
    this.slowStartBelow = ceiling;
  }

  /** The engine's name for the lane's key (queue/leased-batch.ts). */
  get key(): string {
    return this.endpointId;
  }

  /** Attempts that may start now. */
  freeSlots(now = Date.now()): number {
    if (this.pausedUntil > now) return 0;
    return Math.max(0, Math.floor(this.limit) - this.inFlight);
  }

  paused(now = Date.now()): boolean {
    return this.pausedUntil > now;
  }

  /** Claimed-but-unsent deliveries this lane keeps at most. */
  waitingCap(): number {
    return Math.max(MIN_WAITING, 2 * Math.floor(this.limit));
  }

  /** How many more deliveries the next claim may take for this endpoint: none while paused. */
  room(now = Date.now()): number {
    if (this.paused(now)) return 0;
    return Math.max(0, this.freeSlots(now) + this.waitingCap() - this.waiting.length);
  }

  /** Fewer deliveries wait than one round of its limit: a claim would keep it busy (queue/leased-batch.ts). */
  runningLow(): boolean {
    return this.waiting.length < Math.floor(this.limit);
  }

  /** Enough claimed deliveries wait here: the next claims leave this endpoint's rows alone. */
  saturated(now = Date.now()): boolean {
    return this.room(now) === 0;
  }

  /** AIMD on the answer of one attempt; a run of unreachable answers pauses the lane. */
  observe(kind: AnswerKind): void {
    this.unreachableStreak = kind === 'unreachable' ? this.unreachableStreak + 1 : 0;
    if (kind === 'fast-success') {
      const step = this.limit < this.slowStartBelow ? 1 : 1 / Math.floor(this.limit);
      if (this.waiting.length > 0) this.limit = Math.min(this.ceiling, this.limit + step);
    } else if (kind === 'overloaded' || kind === 'unreachable') {
      this.limit = Math.max(1, this.limit / 2);
      this.slowStartBelow = this.limit;
    }
    if (this.unreachableStreak >= UNREACHABLE_PAUSE_AFTER) {
      const doublings = Math.min(this.unreachableStreak - UNREACHABLE_PAUSE_AFTER, 16);
      this.pause(Date.now() + Math.min(MAX_UNREACHABLE_PAUSE_MS, UNREACHABLE_PAUSE_MS * 2 ** doublings));
    }
  }

  pause(untilMs: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, Math.min(untilMs, Date.now() + MAX_PAUSE_MS));
  }

  /** The checked target (url-guard), re-checked after TARGET_RECHECK_MS or when the URL changed. */
  async checkedTarget(url: string, config: Config): Promise<DeliveryTarget> {
    const now = Date.now();
    if (this.target && this.target.url === url && now - this.target.checkedAt < TARGET_RECHECK_MS)
      return this.target.value;
    const value = await resolveDeliveryTarget(url, config);
    this.target = { value, checkedAt: now, url };
    return value;
  }

  /** The keep-alive agent for this target; a new address (or URL) gets a new agent. */
  agentFor(target: DeliveryTarget): http.Agent {
    const key = `${target.url.protocol}//${target.hostname}:${target.url.port}|${target.address}`;
    if (this.agent?.key === key) return this.agent.value;
    this.agent?.value.destroy();
    this.agent = { key, value: createKeepAliveAgent(target, this.ceiling) };
    return this.agent.value;
  }

  close(): void {
    this.agent?.value.destroy();
    this.agent = null;
  }
}

/** Retry-After as milliseconds from now (seconds or an HTTP date); null when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (!header) return null;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(Number(trimmed) * 1000, MAX_PAUSE_MS);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(0, at - now), MAX_PAUSE_MS);
}
