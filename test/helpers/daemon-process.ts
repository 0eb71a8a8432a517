// `node bin/svc.js daemon start` as a child process, exactly as `npm start` runs it, on a port the
// OS picks; answers once it listens (http or https).
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { waitFor } from './wait.ts';

export const SVC_BIN = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));
const children = new Set<ChildProcess>();

export interface DaemonProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  exit: Promise<number | null>;
}

/** The environment without the test run's own database, Redis and loader settings. */
export function cleanEnv(): Record<string, string | undefined> {
  const base: Record<string, string | undefined> = { ...process.env };
  delete base.DATABASE_URL;
  delete base.REDIS_URL;
  delete base.NODE_OPTIONS;
  return base;
}

export interface DaemonProcessOptions {
  /** The svc entry to run (a copy of the code elsewhere, for example). */
  bin?: string;
  /** Runs `node <bin> daemon start …` through another command (which must exec it), e.g. a mount namespace. */
  wrap?: (command: string[]) => string[];
}

export async function startDaemonProcess(
  env: Record<string, string>,
  args: string[] = [],
  options: DaemonProcessOptions = {},
): Promise<DaemonProcess> {
  const command = [process.execPath, options.bin ?? SVC_BIN, 'daemon', 'start', ...args];
  const [file, ...argv] = options.wrap ? options.wrap(command) : command;
  const child = spawn(file, argv, {
    env: { ...cleanEnv(), PORT: '0', LOG_LEVEL: 'info', NODE_ENV: 'test', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exit = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      children.delete(child);
      resolve(code);
    }),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`daemon did not listen within 90 s:\n${output}`)), 90_000);
    const look = () => {
      const match = /Server listening at (https?:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout!.on('data', look);
    void exit.then((code) => {
      clearTimeout(timer);
      reject(new Error(`daemon exited with ${code} before listening:\n${output}`));
    });
  });
  return { child, url, output: () => output, exit };
}

/** Kills every daemon a test file started and did not stop (test.after). */
export function killDaemonProcesses(): void {
  for (const child of children) child.kill('SIGKILL');
}

/**
 * Resolves once the daemon's /health/ready answers 200 (its workers start after the listener); fails at
 * once, with its output, if it exits first, and with its output after `timeoutMs`.
 */
export async function waitForReady(
  daemon: Pick<DaemonProcess, 'url' | 'output' | 'exit'>,
  timeoutMs = 60_000,
): Promise<void> {
  let exited: number | null | undefined;
  void daemon.exit.then((code) => (exited = code));
  await waitFor(
    `${daemon.url}/health/ready to answer 200`,
    async () => {
      if (exited !== undefined)
        throw new Error(`the daemon exited (${exited}) before it was ready:\n${daemon.output()}`);
      const status = await fetch(`${daemon.url}/health/ready`).then(
        (res) => res.status,
        () => 0,
      );
      return status === 200;
    },
    { timeoutMs, intervalMs: 100, details: daemon.output },
  );
}
