// The live email log: server-sent events from GET /emails/logs/stream, or, when the stream is not
// available (older daemon, proxy that buffers), polling GET /emails/logs and yielding what changed.
import type { SvcClient } from '../client.ts';
import type { EmailLog } from '../api-types.ts';

export type LogEntry = EmailLog & { updatedAt?: string };
export type FeedMode = 'stream' | 'poll';

export interface FeedOptions {
  signal: AbortSignal;
  pollMs?: number;
  backlog?: number;
  /** Told when the feed (re)connects or falls back to polling, with the reason. */
  onMode?: (mode: FeedMode, reason?: string) => void;
}

interface SseFrame {
  event: string;
  data: string;
  id?: string;
}

/** Splits a text/event-stream body into frames (https://html.spec.whatwg.org/#event-stream-interpretation). */
export async function* readSseFrames(body: ReadableStream<Uint8Array>, signal: AbortSignal): AsyncGenerator<SseFrame> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const cancel = () => void reader.cancel().catch(() => {});
  signal.addEventListener('abort', cancel, { once: true });
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
      let end: number;
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const frame: SseFrame = { event: 'message', data: '' };
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line === '' || line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          const field = colon === -1 ? line : line.slice(0, colon);
          const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'event') frame.event = value;
          else if (field === 'data') data.push(value);
          else if (field === 'id') frame.id = value;
        }
        if (data.length) yield { ...frame, data: data.join('\n') };
      }
    }
  } finally {
    signal.removeEventListener('abort', cancel);
  }
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

async function* streamLogs(client: SvcClient, options: FeedOptions): AsyncGenerator<LogEntry, string> {
  let lastEventId: string | undefined;
  for (let attempt = 0; attempt < 3 && !options.signal.aborted; attempt++) {
    let response;
    try {
      response = await client.openLogStream(options.signal, { backlog: options.backlog, lastEventId });
    } catch (error) {
      if (options.signal.aborted) return 'stopped';
      return (error as Error).message;
    }
    if (!response.body) return 'the stream answered without a body';
    options.onMode?.('stream');
    try {
      for await (const frame of readSseFrames(response.body, options.signal)) {
        if (frame.id) lastEventId = frame.id;
        if (frame.event !== 'email') continue;
        attempt = 0;
        yield JSON.parse(frame.data) as LogEntry;
      }
    } catch (error) {
      if (options.signal.aborted) return 'stopped';
      options.onMode?.('stream', `stream interrupted (${(error as Error).message}); reconnecting`);
    }
    await sleep(1000, options.signal);
  }
  return 'the stream kept closing';
}

async function* pollLogs(client: SvcClient, options: FeedOptions): AsyncGenerator<LogEntry> {
  const seen = new Map<string, string>();
  const limit = Math.max(1, Math.min(100, options.backlog ?? 20));
  while (!options.signal.aborted) {
    const page = await client.listLogs({ limit });
    for (const entry of [...page.data].reverse()) {
      const fingerprint = `${entry.status}|${entry.attempts}|${entry.error ?? ''}`;
      if (seen.get(entry.id) === fingerprint) continue;
      seen.set(entry.id, fingerprint);
      yield entry;
    }
    await sleep(options.pollMs ?? 2000, options.signal);
  }
}

/** Yields log entries as they change until the signal aborts. */
export async function* followLogs(client: SvcClient, options: FeedOptions): AsyncGenerator<LogEntry> {
  const stream = streamLogs(client, options);
  let next = await stream.next();
  while (!next.done) {
    yield next.value;
    next = await stream.next();
  }
  if (options.signal.aborted) return;
  options.onMode?.('poll', next.value);
  yield* pollLogs(client, options);
}
