// How long this process's event loop made ready work wait: the measure of "nothing a stranger sends
// blocks the daemon". Two views, neither changed by reading it:
// - a Prometheus histogram (registry.ts): a timer every EVENT_LOOP_SAMPLE_MS observes how late it
//   fired, as prom-client's own lag sampler did; buckets only grow, so a stall stays in them however
//   often /metrics is scraped, and rate() over two scrapes shows the stalls in between;
// - the last one to two minutes (perf_hooks.monitorEventLoopDelay), for `svc doctor` and the
//   svc_event_loop_delay_recent_* gauges.
// Created by buildApp, closed with the app.
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

/** Sampling resolution (a delay shorter than this is not seen). */
export const EVENT_LOOP_SAMPLE_MS = 10;
/** Length of one doctor window; the doctor reads the current and the previous one. */
export const EVENT_LOOP_WINDOW_MS = 60_000;

export interface EventLoopDelay {
  p99Ms: number;
  maxMs: number;
  meanMs: number;
}

export interface EventLoopMonitor {
  /** Over the last one to two minutes: the doctor's view. */
  recent(): EventLoopDelay;
  /** Calls `observe` with each sample's delay in seconds (the registry's histogram); the returned function stops. */
  sample(observe: (delaySeconds: number) => void): () => void;
  /** Forgets what was measured so far (boot: loading modules and migrating are not serving). */
  reset(): void;
  close(): void;
}

const NS_PER_MS = 1e6;

function read(histogram: IntervalHistogram): EventLoopDelay {
  // An empty histogram answers NaN for the mean and huge values for min: nothing was measured.
  if (histogram.count === 0) return { p99Ms: 0, maxMs: 0, meanMs: 0 };
  return {
    p99Ms: histogram.percentile(99) / NS_PER_MS,
    maxMs: histogram.max / NS_PER_MS,
    meanMs: histogram.mean / NS_PER_MS,
  };
}

const worst = (a: EventLoopDelay, b: EventLoopDelay): EventLoopDelay => ({
  p99Ms: Math.max(a.p99Ms, b.p99Ms),
  maxMs: Math.max(a.maxMs, b.maxMs),
  meanMs: Math.max(a.meanMs, b.meanMs),
});

export function createEventLoopMonitor(): EventLoopMonitor {
  const window = monitorEventLoopDelay({ resolution: EVENT_LOOP_SAMPLE_MS });
  window.enable();
  let previousWindow: EventLoopDelay = { p99Ms: 0, maxMs: 0, meanMs: 0 };
  const rotate = setInterval(() => {
    previousWindow = read(window);
    window.reset();
  }, EVENT_LOOP_WINDOW_MS);
  rotate.unref();
  const samplers = new Set<NodeJS.Timeout>();
  return {
    recent: () => worst(previousWindow, read(window)),
    sample(observe) {
      let last = performance.now();
      const timer = setInterval(() => {
        const now = performance.now();
        observe(Math.max(0, now - last - EVENT_LOOP_SAMPLE_MS) / 1000);
        last = now;
      }, EVENT_LOOP_SAMPLE_MS);
      timer.unref();
      samplers.add(timer);
      return () => {
        clearInterval(timer);
        samplers.delete(timer);
      };
    },
    reset() {
      window.reset();
      previousWindow = { p99Ms: 0, maxMs: 0, meanMs: 0 };
    },
    close() {
      clearInterval(rotate);
      for (const timer of samplers) clearInterval(timer);
      samplers.clear();
      window.disable();
    },
  };
}
