// A LISTEN connection that comes back by itself, for the per-node caches that drop what they kept when
// the database announces a change (tenants/state-cache.ts, inbound-routing/route-cache.ts). While it is
// down a notification may be missed, so `onReset` runs whenever listening (re)starts or is lost: the
// cache forgets everything and lives on its TTL until the connection is back (retried every
// LISTEN_RETRY_MS). With no URL (the embedded database cannot notify other sessions) nothing listens.
import pg from 'pg';

export const LISTEN_RETRY_MS = 5_000;

export interface ListenOptions {
  /** Where to LISTEN; null: nowhere (the caller lives on its TTL). */
  url: string | null;
  channel: string;
  onNotification(payload: string | undefined): void;
  /** Announcements may have been missed: forget what was kept. */
  onReset(): void;
  onError?: (error: Error) => void;
}

/** Starts listening (resolves once the first attempt succeeded or failed); answers the stop function. */
export async function listenWithRetry(options: ListenOptions): Promise<{ close(): Promise<void> }> {
  let listener: pg.Client | null = null;
  let retry: NodeJS.Timeout | null = null;
  let closed = false;

  async function listen(): Promise<void> {
    if (closed || options.url === null) return;
    const client = new pg.Client({ connectionString: options.url });
    const lost = (error: Error) => {
      if (listener !== client) return;
      listener = null;
      options.onReset();
      options.onError?.(error);
      void client.end().catch(() => {});
      if (!closed) retry = setTimeout(() => void listen(), LISTEN_RETRY_MS).unref();
    };
    client.on('error', lost);
    client.on('end', () => lost(new Error('the LISTEN connection ended')));
    client.on('notification', (message) => {
      if (message.channel === options.channel) options.onNotification(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${options.channel}`);
      listener = client;
      options.onReset();
    } catch (error) {
      listener = client;
      lost(error as Error);
    }
  }
  await listen();

  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const client = listener;
      listener = null;
      await client?.end().catch(() => {});
    },
  };
}
