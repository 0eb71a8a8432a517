// bench/results.json and the Markdown table the README carries.
import type { AcceptFigures } from './accept.ts';
import type { DrainFigures } from './drain.ts';
import type { LatencyFigures } from './latency.ts';
import type { MachineInfo } from './machine.ts';

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
}

export interface BenchResults {
  machine: MachineInfo;
  settings: BenchSettings;
  accept: { svc: AcceptFigures; baselineInsert: AcceptFigures; bareFastify: AcceptFigures };
  drain: { svc: DrainFigures; nodemailer: DrainFigures };
  latency: LatencyFigures;
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

const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;

export function evaluateGoals(r: Omit<BenchResults, 'goals'>): Goal[] {
  // A run that answered nothing measured nothing: its zeros must not pass for a met goal.
  const answered = r.accept.svc.requests > 0;
  const acceptRatio = ratio(r.accept.svc.requestsPerSecond, r.accept.baselineInsert.requestsPerSecond);
  const p99Ratio = ratio(r.accept.svc.latencyP99Ms, r.accept.baselineInsert.latencyP99Ms);
  const drainRatio = ratio(r.drain.svc.messagesPerSecond, r.drain.nodemailer.messagesPerSecond);
  return [
    { name: 'accept req/s vs Fastify + 1 INSERT', value: acceptRatio, target: '≥ 0.75×', met: acceptRatio >= 0.75 },
    { name: 'accept p99 vs Fastify + 1 INSERT', value: p99Ratio, target: '≤ 1.5×', met: answered && p99Ratio <= 1.5 },
    { name: 'drain msg/s vs pooled nodemailer', value: drainRatio, target: '≥ 0.7×', met: drainRatio >= 0.7 },
    { name: '202 → sink p50 (ms)', value: r.latency.deliveryP50Ms, target: '< 50 ms', met: r.latency.deliveryP50Ms < 50 },
    { name: '202 → sink p99 (ms)', value: r.latency.deliveryP99Ms, target: '< 250 ms', met: r.latency.deliveryP99Ms < 250 },
  ];
}

const n = (value: number) => Math.round(value).toLocaleString('en-US');
const ms = (value: number) => `${value} ms`;
const mark = (goal: Goal) => (goal.met ? 'met' : '**missed**');

export function markdownTable(r: BenchResults): string {
  const { svc, baselineInsert, bareFastify } = r.accept;
  const [acceptRate, acceptP99, drain, p50, p99] = r.goals;
  const s = r.settings;
  const m = r.machine;
  const lines = [
    `| Measurement | svc | Baseline | Ratio | Goal |`,
    `|---|---|---|---|---|`,
    `| \`POST /emails/send\` accept rate (API key, async; ${s.connections} connections, ${s.durationSeconds} s) | ${n(svc.requestsPerSecond)} req/s | ${n(baselineInsert.requestsPerSecond)} req/s (bare Fastify + one pg INSERT) | ${acceptRate.value}× | ≥ 0.75× — ${mark(acceptRate)} |`,
    `| Accept latency p50 / p99 | ${ms(svc.latencyP50Ms)} / ${ms(svc.latencyP99Ms)} | ${ms(baselineInsert.latencyP50Ms)} / ${ms(baselineInsert.latencyP99Ms)} | p99 ${acceptP99.value}× | p99 ≤ 1.5× — ${mark(acceptP99)} |`,
    `| Reference: bare Fastify, no database | — | ${n(bareFastify.requestsPerSecond)} req/s, p50 ${ms(bareFastify.latencyP50Ms)} / p99 ${ms(bareFastify.latencyP99Ms)} | — | — |`,
    `| End to end: ${n(r.drain.svc.messages)} queued sends drained to an SMTP sink (pool of ${s.smtpMaxConnections}) | ${n(r.drain.svc.messagesPerSecond)} msg/s | ${n(r.drain.nodemailer.messagesPerSecond)} msg/s (plain pooled nodemailer, same pool) | ${drain.value}× | ≥ 0.7× — ${mark(drain)} |`,
    `| 202 → sink receives the message, at ${n(r.latency.ratePerSecond)} sends/s (half the drain rate) | p50 ${ms(r.latency.deliveryP50Ms)} / p99 ${ms(r.latency.deliveryP99Ms)} | — | — | p50 < 50 ms — ${mark(p50)}; p99 < 250 ms — ${mark(p99)} |`,
    `| Process CPU per message (server or sender, all threads; PostgreSQL not included) | accept ${svc.serverCpuMsPerRequest ?? '?'} ms, delivery ${r.drain.svc.senderCpuMsPerMessage ?? '?'} ms | accept ${baselineInsert.serverCpuMsPerRequest ?? '?'} ms (Fastify + INSERT), delivery ${r.drain.nodemailer.senderCpuMsPerMessage ?? '?'} ms (nodemailer) | — | — |`,
    `| Database statements per message (BEGIN/COMMIT included) | accept ${r.queriesPerSend.accept}, delivery ${r.queriesPerSend.delivery} | ${r.queriesPerSend.baselineInsert} (the INSERT) | — | — |`,
    '',
    `Measured ${m.date.slice(0, 10)} on ${m.nproc} × ${m.cpuModel}, ${m.memoryGiB} GiB, Node ${m.node}, PostgreSQL ${m.postgres ?? '?'}; load generator, SMTP sink and daemon on the same machine (load average ${m.loadAverageAtStart.join(' / ')} at start). \`npm run bench\` writes bench/results.json.`,
  ];
  return lines.join('\n');
}
