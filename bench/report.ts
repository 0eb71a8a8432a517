// bench/results.json and the Markdown table the README carries.
import type { AcceptFigures } from './accept.ts';
import type { DrainFigures } from './drain.ts';
import type { LatencyFigures } from './latency.ts';
import type { MachineInfo } from './machine.ts';
import type { SoakFigures } from './soak.ts';

export interface BenchSettings {
  connections: number;
  durationSeconds: number;
  warmupRequests: number;
  sends: number;
  smtpMaxConnections: number;
  smtpMaxMessages: number;
  latencySeconds: number;
  daemonLogLevel: string;
  redis: boolean;
  /** Sends of the soak (--soak), null when it did not run. */
  soakSends: number | null;
}

export interface BenchResults {
  machine: MachineInfo;
  settings: BenchSettings;
  /** Null when only the drains were measured (--drain). */
  /** svc: rate limits in Redis (the goals' row); svcInProcessLimiter: the same daemon without Redis. */
  accept: {
    svc: AcceptFigures;
    svcInProcessLimiter?: AcceptFigures;
    baselineInsert: AcceptFigures;
    bareFastify: AcceptFigures;
  } | null;
  /** svc and nodemailer DKIM-signed with the same key; svcUnsigned and nodemailerUnsigned without DKIM. */
  drain: { svc: DrainFigures; nodemailer: DrainFigures; svcUnsigned: DrainFigures; nodemailerUnsigned: DrainFigures };
  latency: LatencyFigures;
  soak: SoakFigures | null;
  loadAverageAtEnd: number[];
  /** Statements the daemon sends to PostgreSQL per message (BEGIN and COMMIT count), counted in pg.Client. */
  queriesPerSend: { accept: number; delivery: number; baselineInsert: number };
  goals: Goal[];
}

export interface Goal {
  name: string;
  value: number;
  target: string;
  met: boolean;
}

/** The drain's goal beside pooled nodemailer, signed and unsigned, on a worker node (issue 27 §3). */
const DRAIN_GOAL = 0.8;

const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;

export function evaluateGoals(r: Omit<BenchResults, 'goals'>): Goal[] {
  const goals: Goal[] = [];
  if (r.accept) {
    // A run that answered nothing measured nothing: its zeros must not pass for a met goal.
    const answered = r.accept.svc.requests > 0;
    const acceptRatio = ratio(r.accept.svc.requestsPerSecond, r.accept.baselineInsert.requestsPerSecond);
    const p99Ratio = ratio(r.accept.svc.latencyP99Ms, r.accept.baselineInsert.latencyP99Ms);
    goals.push(
      {
        name: 'accept req/s vs Fastify + 1 INSERT',
        value: acceptRatio,
        target: '≥ 0.8× (issue 51 §3)',
        met: acceptRatio >= 0.8,
      },
      {
        name: 'accept p99 vs Fastify + 1 INSERT',
        value: p99Ratio,
        target: '≤ 1.4× (issue 51 §3)',
        met: answered && p99Ratio <= 1.4,
      },
    );
  }
  const drainRatio = ratio(r.drain.svc.messagesPerSecond, r.drain.nodemailer.messagesPerSecond);
  const unsignedRatio = ratio(r.drain.svcUnsigned.messagesPerSecond, r.drain.nodemailerUnsigned.messagesPerSecond);
  goals.push(
    {
      name: 'drain msg/s vs pooled nodemailer (DKIM-signed)',
      value: drainRatio,
      target: `≥ ${DRAIN_GOAL}×`,
      met: drainRatio >= DRAIN_GOAL,
    },
    {
      name: 'drain msg/s vs pooled nodemailer (unsigned)',
      value: unsignedRatio,
      target: `≥ ${DRAIN_GOAL}×`,
      met: unsignedRatio >= DRAIN_GOAL,
    },
    {
      name: '202 → sink p50 (ms)',
      value: r.latency.deliveryP50Ms,
      target: '< 50 ms',
      met: r.latency.deliveryP50Ms < 50,
    },
    {
      name: '202 → sink p99 (ms)',
      value: r.latency.deliveryP99Ms,
      target: '< 250 ms',
      met: r.latency.deliveryP99Ms < 250,
    },
  );
  if (r.soak) {
    goals.push(
      {
        name: 'soak: sink count = accepted count',
        value: r.soak.sinkCount - r.soak.accepted,
        target: '0',
        met: r.soak.sinkCount === r.soak.accepted,
      },
      {
        name: 'soak: RSS growth (%)',
        value: r.soak.rssGrowthPercent,
        target: '< 10 %',
        met: r.soak.rssGrowthPercent < 10,
      },
    );
  }
  return goals;
}

const n = (value: number) => Math.round(value).toLocaleString('en-US');
const ms = (value: number) => `${value} ms`;
const mark = (goal: Goal) => (goal.met ? 'met' : '**missed**');

const goal = (r: BenchResults, name: string) => r.goals.find((g) => g.name.startsWith(name))!;

export function markdownTable(r: BenchResults): string {
  const s = r.settings;
  const m = r.machine;
  const d = r.drain;
  const [p50, p99] = [goal(r, '202 → sink p50'), goal(r, '202 → sink p99')];
  const lines = [`| Measurement | svc | Baseline | Ratio | Goal |`, `|---|---|---|---|---|`];
  if (r.accept) {
    const { svc, baselineInsert, bareFastify } = r.accept;
    const [acceptRate, acceptP99] = [goal(r, 'accept req/s'), goal(r, 'accept p99')];
    lines.push(
      `| \`POST /emails/send\` accept rate (API key, async, rate limits in Redis; ${s.connections} connections, ${s.durationSeconds} s) | ${n(svc.requestsPerSecond)} req/s | ${n(baselineInsert.requestsPerSecond)} req/s (bare Fastify + one pg INSERT) | ${acceptRate.value}× | ≥ 0.8× — ${mark(acceptRate)} |`,
      `| Accept latency p50 / p99 | ${ms(svc.latencyP50Ms)} / ${ms(svc.latencyP99Ms)} | ${ms(baselineInsert.latencyP50Ms)} / ${ms(baselineInsert.latencyP99Ms)} | p99 ${acceptP99.value}× | p99 ≤ 1.4× — ${mark(acceptP99)} |`,
      ...(r.accept.svcInProcessLimiter
        ? [
            `| The same, in-process rate limiter (no Redis) | ${n(r.accept.svcInProcessLimiter.requestsPerSecond)} req/s, p50 ${ms(r.accept.svcInProcessLimiter.latencyP50Ms)} / p99 ${ms(r.accept.svcInProcessLimiter.latencyP99Ms)} | ${n(baselineInsert.requestsPerSecond)} req/s | ${ratio(r.accept.svcInProcessLimiter.requestsPerSecond, baselineInsert.requestsPerSecond)}×, p99 ${ratio(r.accept.svcInProcessLimiter.latencyP99Ms, baselineInsert.latencyP99Ms)}× | — |`,
          ]
        : []),
      `| Reference: bare Fastify, no database | — | ${n(bareFastify.requestsPerSecond)} req/s, p50 ${ms(bareFastify.latencyP50Ms)} / p99 ${ms(bareFastify.latencyP99Ms)} | — | — |`,
    );
  }
  const signed = goal(r, 'drain msg/s vs pooled nodemailer (DKIM');
  const unsigned = goal(r, 'drain msg/s vs pooled nodemailer (unsigned');
  lines.push(
    `| End to end: ${n(d.svc.messages)} queued sends drained to an SMTP sink (pool of ${s.smtpMaxConnections}), DKIM-signed on both sides | ${n(d.svc.messagesPerSecond)} msg/s | ${n(d.nodemailer.messagesPerSecond)} msg/s (plain pooled nodemailer, same pool, same key) | ${signed.value}× | ≥ ${DRAIN_GOAL}× — ${mark(signed)} |`,
    `| The same, unsigned on both sides | ${n(d.svcUnsigned.messagesPerSecond)} msg/s | ${n(d.nodemailerUnsigned.messagesPerSecond)} msg/s | ${unsigned.value}× | ≥ ${DRAIN_GOAL}× — ${mark(unsigned)} |`,
    `| 202 → sink receives the message, at ${n(r.latency.ratePerSecond)} sends/s (half the drain rate) | p50 ${ms(r.latency.deliveryP50Ms)} / p99 ${ms(r.latency.deliveryP99Ms)} | — | — | p50 < 50 ms — ${mark(p50)}; p99 < 250 ms — ${mark(p99)} |`,
    `| Process CPU per message delivered, signed / unsigned (all threads; PostgreSQL not included) | ${d.svc.senderCpuMsPerMessage ?? '?'} ms / ${d.svcUnsigned.senderCpuMsPerMessage ?? '?'} ms | ${d.nodemailer.senderCpuMsPerMessage ?? '?'} ms / ${d.nodemailerUnsigned.senderCpuMsPerMessage ?? '?'} ms (nodemailer) | — | — |`,
  );
  if (r.accept)
    lines.push(
      `| Process CPU per accepted send | ${r.accept.svc.serverCpuMsPerRequest ?? '?'} ms | ${r.accept.baselineInsert.serverCpuMsPerRequest ?? '?'} ms (Fastify + INSERT) | — | — |`,
    );
  lines.push(
    `| Database statements per message (BEGIN/COMMIT included) | accept ${r.queriesPerSend.accept}, delivery ${r.queriesPerSend.delivery} | ${r.queriesPerSend.baselineInsert} (the INSERT) | — | — |`,
  );
  if (r.soak) {
    const k = r.soak;
    lines.push(
      `| Soak: ${n(k.sends)} sends at ${n(k.ratePerSecond)}/s | ${n(k.sinkCount)} of ${n(k.accepted)} accepted at the sink; RSS ${k.rssStartMb} → ${k.rssEndMb} MB (${k.rssGrowthPercent} %) | — | — | count equal — ${mark(goal(r, 'soak: sink'))}; RSS < 10 % — ${mark(goal(r, 'soak: RSS'))} |`,
    );
  }
  lines.push(
    '',
    `Measured ${m.date.slice(0, 10)} on ${m.nproc} × ${m.cpuModel}, ${m.memoryGiB} GiB, Node ${m.node}, PostgreSQL ${m.postgres ?? '?'}; load generator, SMTP sink and daemon on the same machine (load average ${m.loadAverageAtStart.join(' / ')} at start, ${r.loadAverageAtEnd.join(' / ')} at the end). \`npm run bench\` writes bench/results.json.`,
  );
  return lines.join('\n');
}
