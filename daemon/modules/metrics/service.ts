// GET /metrics in Prometheus's text format (version 0.0.4): what this process measures of itself.
import type { EventLoopMonitor } from './event-loop.ts';

export interface MetricsDeps {
  eventLoop: EventLoopMonitor;
}

interface Gauge {
  name: string;
  help: string;
  value: number;
}

function render(gauges: Gauge[]): string {
  return gauges
    .map((gauge) => `# HELP ${gauge.name} ${gauge.help}\n# TYPE ${gauge.name} gauge\n${gauge.name} ${gauge.value}\n`)
    .join('');
}

/** The exposition text; reading it starts a new event-loop interval (the values cover the time since the previous scrape). */
export function renderMetrics(deps: MetricsDeps): string {
  const delay = deps.eventLoop.takeScrapeInterval();
  const seconds = (ms: number) => Number((ms / 1000).toFixed(6));
  return render([
    {
      name: 'svc_event_loop_delay_p99_seconds',
      help: "99th percentile of this process's event-loop delay since the previous scrape.",
      value: seconds(delay.p99Ms),
    },
    {
      name: 'svc_event_loop_delay_max_seconds',
      help: 'Longest event-loop delay of this process since the previous scrape.',
      value: seconds(delay.maxMs),
    },
    {
      name: 'svc_event_loop_delay_mean_seconds',
      help: 'Mean event-loop delay of this process since the previous scrape.',
      value: seconds(delay.meanMs),
    },
    {
      name: 'process_resident_memory_bytes',
      help: 'Resident memory of this process (every thread) in bytes.',
      value: process.memoryUsage.rss(),
    },
  ]);
}
