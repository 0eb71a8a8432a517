// Measurement 3: time from the 202 of POST /emails/send to the sink receiving that message (matched
// by Message-ID), with sends paced at a fixed rate (half the measured drain rate) by a keep-alive
// HTTP client in the bench process. Sink and client share one clock (performance.now()).
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { sendBody } from './message.ts';
import type { BenchSink } from './sink.ts';

export interface LatencyFigures {
  ratePerSecond: number;
  sends: number;
  delivered: number;
  /** 202 → sink. */
  deliveryP50Ms: number;
  deliveryP99Ms: number;
  deliveryMaxMs: number;
  /** request → 202, at this rate. */
  acceptP50Ms: number;
  acceptP99Ms: number;
}

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index];
}

interface Accepted {
  messageId: string;
  sentAt: number;
  acceptedAt: number;
}

export function postSend(
  agent: http.Agent,
  url: URL,
  apiKey: string,
  body: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          authorization: `Bearer ${apiKey}`,
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

export async function measureDeliveryLatency(
  baseUrl: string,
  apiKey: string,
  sink: BenchSink,
  ratePerSecond: number,
  seconds: number,
): Promise<LatencyFigures> {
  const total = Math.max(1, Math.round(ratePerSecond * seconds));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const url = new URL(`${baseUrl}/emails/send`);
  const accepted: Accepted[] = [];
  const failures: string[] = [];
  const pending: Promise<void>[] = [];
  const start = performance.now();
  let issued = 0;

  const issue = (n: number) => {
    // A distinct subject per send: each is its own message, as in real traffic.
    const body = JSON.stringify(sendBody('Reader <reader@example.com>', `Your weekly summary #${n}`));
    const sentAt = performance.now();
    pending.push(
      postSend(agent, url, apiKey, body).then(
        ({ status, text }) => {
          const acceptedAt = performance.now();
          if (status !== 202) return void failures.push(`${status} ${text.slice(0, 200)}`);
          accepted.push({ messageId: (JSON.parse(text) as { messageId: string }).messageId, sentAt, acceptedAt });
        },
        (error: Error) => void failures.push(error.message),
      ),
    );
  };

  // Every tick issues the sends that are due by now, so the pace holds even when a tick is late.
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * ratePerSecond) + 1);
      while (issued < due) issue(issued++);
      if (issued >= total) {
        clearInterval(timer);
        resolve();
      }
    }, 5);
  });
  await Promise.all(pending);
  agent.destroy();
  if (failures.length) throw new Error(`${failures.length} of ${total} paced sends failed; first: ${failures[0]}`);

  // Wait (bounded) for the last messages to arrive.
  const deadline = Date.now() + 60_000;
  while (accepted.some((a) => sink.receivedAt(a.messageId) === undefined) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const delivery = accepted
    .map((a) => {
      const at = sink.receivedAt(a.messageId);
      return at === undefined ? undefined : at - a.acceptedAt;
    })
    .filter((d): d is number => d !== undefined)
    .sort((a, b) => a - b);
  const accept = accepted.map((a) => a.acceptedAt - a.sentAt).sort((a, b) => a - b);
  if (delivery.length < accepted.length)
    throw new Error(
      `${accepted.length - delivery.length} of ${accepted.length} paced sends never reached the sink within 60 s`,
    );
  return {
    ratePerSecond: round(ratePerSecond, 0),
    sends: total,
    delivered: delivery.length,
    deliveryP50Ms: round(percentile(delivery, 50)),
    deliveryP99Ms: round(percentile(delivery, 99)),
    deliveryMaxMs: round(delivery[delivery.length - 1]),
    acceptP50Ms: round(percentile(accept, 50)),
    acceptP99Ms: round(percentile(accept, 99)),
  };
}
