// The daemon's log: JSON lines for machines (files, journald, CI), readable coloured lines when a
// person watches the terminal. Health polls are logged at debug, so a load balancer's probe every few
// seconds does not bury what matters.
import { createServer } from 'node:net';
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';

/** Paths whose values never reach a log line (kept here so main.ts and buildApp share them). */
export interface DaemonLogOptions {
  level: string;
  redact: string[];
}

/** `destination` defaults to stdout; a TTY gets pino-pretty (synchronous, so lines keep their order). */
export function createDaemonLogger(
  options: DaemonLogOptions,
  destination: NodeJS.WritableStream & { isTTY?: boolean } = process.stdout,
): Logger {
  if (!destination.isTTY) return pino({ level: options.level, redact: options.redact }, destination);
  const stream = pretty({
    destination,
    sync: true,
    colorize: true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname',
  });
  return pino({ level: options.level, redact: options.redact }, stream);
}

export function isHealthPoll(url: string | undefined): boolean {
  return (
    url !== undefined &&
    (url === '/health' || url.startsWith('/health/') || url.startsWith('/health?') || url === '/metrics')
  );
}

/**
 * Fails at once with a sentence when the port is taken, before the database is opened or migrated:
 * a second `svc daemon start` should not touch the database the first one is using.
 */
export function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE')
        reject(
          new Error(
            `Port ${port} on ${host} is already in use (another svc daemon?): stop it, or pass --port / set PORT.`,
          ),
        );
      else if (error.code === 'EACCES')
        reject(
          new Error(`Not allowed to listen on port ${port} on ${host}: choose a port above 1024 with --port / PORT.`),
        );
      else reject(error);
    });
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}
