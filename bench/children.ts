// Child processes of the bench (the daemon, the baselines, the nodemailer sender): started with
// tsx, ready when they print "ready ...", stopped with SIGTERM (SIGKILL if they hang).
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const BENCH_DIR = fileURLToPath(new URL('.', import.meta.url));
export const ROOT_DIR = join(BENCH_DIR, '..');

export interface Child {
  /** What the child printed after "ready". */
  readyText: string;
  /** Lines the child printed after it was ready (the nodemailer sender reports its figures). */
  lines: string[];
  process: ChildProcess;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface SpawnOptions {
  env?: Record<string, string>;
  /** Extra node flags (e.g. --cpu-prof). */
  nodeArgs?: string[];
  readyTimeoutMs?: number;
}

export async function startChild(
  name: string,
  script: string,
  args: string[],
  options: SpawnOptions = {},
): Promise<Child> {
  const child = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), '--import', 'tsx', join(BENCH_DIR, script), ...args],
    {
      cwd: ROOT_DIR,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const lines: string[] = [];
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const readyText = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    let ready = false;
    const timer = setTimeout(
      () => reject(new Error(`${name} did not start within ${options.readyTimeoutMs ?? 120_000} ms\n${stderr}`)),
      options.readyTimeoutMs ?? 120_000,
    );
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      let newline: number;
      while ((newline = buffered.indexOf('\n')) !== -1) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (!ready && line.startsWith('ready')) {
          ready = true;
          clearTimeout(timer);
          resolve(line.slice('ready'.length).trim());
        } else if (ready) {
          lines.push(line);
        }
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      if (!ready) reject(new Error(`${name} exited with ${code} before it was ready\n${stderr}`));
    });
  });
  return {
    readyText,
    lines,
    process: child,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Statements sent so far by every thread of process `pid` (see count-queries.mjs). Waits a moment
 * first so each thread has written its latest count.
 */
export async function queriesSentBy(dir: string, pid: number): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 500));
  return readdirSync(dir)
    .filter((file) => file.startsWith(`${pid}-`))
    .reduce((sum, file) => sum + Number(readFileSync(join(dir, file), 'utf8')), 0);
}

/** CPU time (user + system, every thread) process `pid` has used so far, in ms; null off Linux. */
export function cpuTimeMs(pid: number): number | null {
  try {
    // Fields after "(comm) ": state is the 1st, utime the 12th, stime the 13th, in clock ticks (100/s).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

export const QUERY_COUNTER = join(BENCH_DIR, 'count-queries.mjs');
