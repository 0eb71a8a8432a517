// The SMTP sink every delivery measurement sends to: smtp-server in the bench process, no auth, no
// TLS, no parsing beyond finding the Message-ID header, so the sink costs as little as it can.
import { performance } from 'node:perf_hooks';
import { SMTPServer } from 'smtp-server';

export interface BenchSink {
  port: number;
  /** Messages received since the last reset. */
  count(): number;
  /** performance.now() of the first and the last message since the last reset. */
  firstAt(): number | null;
  lastAt(): number | null;
  /** performance.now() at which the message with this Message-ID (angle brackets included) arrived. */
  receivedAt(messageId: string): number | undefined;
  reset(): void;
  waitForCount(count: number, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

const MESSAGE_ID = /^message-id:[ \t]*(<[^>\r\n]+>)/im;

export async function startBenchSink(): Promise<BenchSink> {
  let count = 0;
  let first: number | null = null;
  let last: number | null = null;
  const arrivals = new Map<string, number>();

  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    size: 30 * 1024 * 1024,
    // The pool keeps its connections for thousands of messages; don't drop them.
    socketTimeout: 120_000,
    onData(stream, _session, callback) {
      let head = '';
      let headDone = false;
      stream.on('data', (chunk: Buffer) => {
        if (headDone) return;
        head += chunk.toString('latin1');
        const end = head.indexOf('\r\n\r\n');
        if (end !== -1) {
          head = head.slice(0, end);
          headDone = true;
        }
      });
      stream.on('end', () => {
        const now = performance.now();
        // Folded headers: join continuation lines before looking for Message-ID.
        const id = MESSAGE_ID.exec(head.replace(/\r\n[ \t]+/g, ' '))?.[1];
        if (id) arrivals.set(id, now);
        count += 1;
        first ??= now;
        last = now;
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;

  return {
    port,
    count: () => count,
    firstAt: () => first,
    lastAt: () => last,
    receivedAt: (messageId) => arrivals.get(messageId),
    reset() {
      count = 0;
      first = null;
      last = null;
      arrivals.clear();
    },
    async waitForCount(target, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (count < target) {
        if (Date.now() > deadline)
          throw new Error(`SMTP sink: ${count} of ${target} messages after ${Math.round(timeoutMs / 1000)} s`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
