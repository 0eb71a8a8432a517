// How long this process's event loop made ready work wait (perf_hooks.monitorEventLoopDelay): the
// measure of "nothing a stranger sends blocks the daemon". Two views of the same samples: one per
// /metrics scrape (reset by each scrape, as prom-client does, so a scraper sees its interval), and
// one over the last one to two minutes for `svc doctor`. Created by buildApp, closed with the app.
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

/** Sampling resolution of the histograms (a delay shorter than this is not seen). */
const EVENT_LOOP_RESOLUTION_MS = 10;
/** Length of one doctor window; the doctor reads the current and the previous one. */
export const EVENT_LOOP_WINDOW_MS = 60_000;

export interface EventLoopDelay {
  p99Ms: number;
  maxMs: number;
  meanMs: number;
}

export interface EventLoopMonitor {
  /**
   * Since the previous call (or since the app was ready), then starts a new interval. After a reset the
   * histogram's timer needs one tick (EVENT_LOOP_RESOLUTION_MS) before it measures again.
   */
  takeScrapeInterval(): EventLoopDelay;
  /** Over the last one to two minutes: the doctor's view. */
  recent(): EventLoopDelay;
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
  const scrape = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
  const window = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
  scrape.enable();
  window.enable();
  let previousWindow: EventLoopDelay = { p99Ms: 0, maxMs: 0, meanMs: 0 };
  const rotate = setInterval(() => {
    previousWindow = read(window);
    window.reset();
  }, EVENT_LOOP_WINDOW_MS);
  rotate.unref();
  return {
    takeScrapeInterval() {
      const delay = read(scrape);
      scrape.reset();
      return delay;
    },
    recent: () => worst(previousWindow, read(window)),
    reset() {
      scrape.reset();
      window.reset();
      previousWindow = { p99Ms: 0, maxMs: 0, meanMs: 0 };
    },
    close() {
      clearInterval(rotate);
      scrape.disable();
      window.disable();
    },
  };
}
