// Measurement 2: end to end. N sends are accepted through the API (workers off), then the daemon's
// real worker threads drain them to the SMTP sink; beside it, plain pooled nodemailer sends N
// messages to the same sink with the same pool size. Rates are taken at the sink, from the first
// message to the last, so process start-up counts for neither side.
import autocannon from 'autocannon';
import { QueryTypes, type Sequelize } from 'sequelize';
import { sendBody } from './message.ts';
import type { BenchSink } from './sink.ts';

export interface DrainFigures {
  label: string;
  messages: number;
  seconds: number;
  messagesPerSecond: number;
  /** CPU time of the sending process (all its threads) per message, from its ready line to the last message (Linux). */
  senderCpuMsPerMessage: number | null;
}

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

export async function waitedSendJobs(sequelize: Sequelize): Promise<number> {
  const [row] = await sequelize.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE queue = 'send'`, {
    type: QueryTypes.SELECT,
  });
  return row.n;
}

/** Accepts exactly `count` sends through the API of a daemon whose workers are off. */
export async function enqueueSends(baseUrl: string, apiKey: string, count: number, connections = 32): Promise<void> {
  const result = await autocannon({
    url: `${baseUrl}/emails/send`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify(sendBody('Reader <reader@example.com>', 'Your weekly summary')),
    connections,
    amount: count,
    timeout: 30,
  });
  if (result['2xx'] !== count)
    throw new Error(
      `enqueueing ${count} sends: only ${result['2xx']} were accepted (${result.non2xx} non-2xx, ${result.errors} errors)`,
    );
}

/** Waits until the sink has `count` messages and reads the rate off its first and last arrival. */
export async function drainFigures(
  label: string,
  sink: BenchSink,
  count: number,
  timeoutMs: number,
  senderCpuMs: () => Promise<number | null>,
): Promise<DrainFigures> {
  await sink.waitForCount(count, timeoutMs);
  const cpu = await senderCpuMs();
  const seconds = (sink.lastAt()! - sink.firstAt()!) / 1000;
  return {
    label,
    messages: count,
    seconds: round(seconds, 2),
    messagesPerSecond: round((count - 1) / seconds, 0),
    senderCpuMsPerMessage: cpu === null ? null : round(cpu / count, 2),
  };
}

/** Every accepted send reached SENT and left the queue. */
export async function checkDrained(
  sequelize: Sequelize,
  count: number,
  timeoutMs = 30_000,
): Promise<{ sent: number; jobsLeft: number }> {
  // The sink has the last message a moment before the worker records it and deletes its job.
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [row] = await sequelize.query<{ sent: number }>(
      `SELECT count(*)::int AS sent FROM email_logs WHERE status = 'SENT'`,
      { type: QueryTypes.SELECT },
    );
    const jobsLeft = await waitedSendJobs(sequelize);
    if (row.sent >= count && jobsLeft === 0) return { sent: row.sent, jobsLeft };
    if (Date.now() > deadline)
      throw new Error(`after the drain: ${row.sent} of ${count} email logs SENT, ${jobsLeft} send jobs left`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
