// The soak (`npm run bench -- --soak`): sends paced at a fixed rate (half the measured drain rate)
// through POST /emails/send of a daemon running its workers, for as many sends as asked (200,000
// by default). Every accepted send must reach the sink, and the daemon's resident memory (all its
// threads) must not grow by 10 % or more from a quarter of the way in to the end. (Not from the start:
// the first minutes hold the module compiler's heaps, tsx compiling in every thread, and RSS falls
// by a third once they are collected.)
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { percentile, postSend } from './latency.ts';
import { sendBody } from './message.ts';
import type { BenchSink } from './sink.ts';

export interface SoakFigures {
  sends: number;
  ratePerSecond: number;
  seconds: number;
  accepted: number;
  refused: number;
  sinkCount: number;
  /** RSS once a quarter of the sends went out (warm: code loaded and compiled, pools open), and at the end. */
  rssStartMb: number;
  rssEndMb: number;
  rssPeakMb: number;
  rssGrowthPercent: number;
  deliveryP50Ms: number;
  deliveryP99Ms: number;
}

export interface SoakOptions {
  url: string;
  apiKey: string;
  sink: BenchSink;
  /** The daemon's process id (its RSS is read from /proc). */
  pid: number;
  ratePerSecond: number;
  sends: number;
  log: (message: string) => void;
}

/** The process's resident memory in MB; NaN once it has exited (or off Linux). */
function rssMb(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Math.round(Number(match[1]) / 1024) : NaN;
  } catch {
    return NaN;
  }
}

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

export async function runSoak(options: SoakOptions): Promise<SoakFigures> {
  const { sink, pid, ratePerSecond, sends, log } = options;
  log(`soak: ${sends} sends at ${Math.round(ratePerSecond)}/s (~${Math.round(sends / ratePerSecond)} s)`);
  sink.reset();
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const url = new URL(`${options.url}/emails/send`);
  const body = JSON.stringify(sendBody('Reader <reader@example.com>', 'Your weekly summary'));
  // 202 → sink of every send, matched by Message-ID; kept as numbers only (200,000 of them is little).
  const acceptedAt = new Map<string, number>();
  let accepted = 0;
  let refused = 0;
  let outstanding = 0;
  let issued = 0;
  let rssStart: number | null = null;
  let rssPeak = 0;
  const start = performance.now();
  let sampler: NodeJS.Timeout | undefined;

  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(sends, Math.floor(((performance.now() - start) / 1000) * ratePerSecond) + 1);
      while (issued < due) {
        issued += 1;
        outstanding += 1;
        postSend(agent, url, options.apiKey, body)
          .then(
            ({ status, text }) => {
              if (status !== 202) return void (refused += 1);
              accepted += 1;
              acceptedAt.set((JSON.parse(text) as { messageId: string }).messageId, performance.now());
            },
            () => void (refused += 1),
          )
          .finally(() => (outstanding -= 1));
      }
      if (rssStart === null && issued >= sends / 4) rssStart = rssMb(pid);
      if (issued >= sends && outstanding === 0) {
        clearInterval(timer);
        resolve();
      }
    }, 5);
    let ticks = 0;
    sampler = setInterval(() => {
      const rss = rssMb(pid);
      if (!Number.isNaN(rss)) rssPeak = Math.max(rssPeak, rss);
      if (++ticks % 30 === 0) log(`  soak: ${issued} sent, ${sink.count()} at the sink, RSS ${rss} MB`);
    }, 1_000);
  });
  clearInterval(sampler);
  agent.destroy();
  // The last sends still drain: wait (bounded) until the sink has every accepted one.
  const deadline = Date.now() + 120_000;
  while (sink.count() < accepted && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  const seconds = (performance.now() - start) / 1000;
  const rssEnd = rssMb(pid);
  const delivery: number[] = [];
  for (const [messageId, at] of acceptedAt) {
    const received = sink.receivedAt(messageId);
    if (received !== undefined) delivery.push(received - at);
  }
  delivery.sort((a, b) => a - b);
  const startMb = rssStart ?? rssEnd;
  const figures: SoakFigures = {
    sends,
    ratePerSecond: round(ratePerSecond, 0),
    seconds: round(seconds),
    accepted,
    refused,
    sinkCount: sink.count(),
    rssStartMb: startMb,
    rssEndMb: rssEnd,
    rssPeakMb: Math.max(rssPeak, rssEnd),
    rssGrowthPercent: round(((rssEnd - startMb) / startMb) * 100),
    deliveryP50Ms: round(percentile(delivery, 50)),
    deliveryP99Ms: round(percentile(delivery, 99)),
  };
  log(
    `  soak: ${figures.sinkCount} of ${accepted} accepted at the sink (${refused} refused), RSS ${figures.rssStartMb} → ${figures.rssEndMb} MB (${figures.rssGrowthPercent} %), 202 → sink p50 ${figures.deliveryP50Ms} ms / p99 ${figures.deliveryP99Ms} ms`,
  );
  return figures;
}
