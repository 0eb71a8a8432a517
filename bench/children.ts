// Child processes of the bench: the daemon as an operator starts it (its build, startDaemonProcess),
// and the bench's own helpers (baselines, the nodemailer sender) started with tsx, ready when they
// print "ready ...". All are stopped with SIGTERM (SIGKILL if they hang).
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
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

/** Whether `port` on loopback takes a connection now. */
export function portTakesConnections(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** A peer a bench starts (Haraka, OpenDKIM): its process, and the last of what it printed, for errors. */
export interface Peer {
  name: string;
  child: ChildProcess;
  output(): string;
}

export function spawnPeer(name: string, command: string, args: string[], options: { cwd?: string } = {}): Peer {
  const child = spawn(command, args, { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return { name, child, output: () => output };
}

/** Waits until `ready()` answers true; throws with the peer's output if it exits first or the deadline passes. */
export async function waitForPeerReady(
  peer: Peer,
  ready: () => boolean | Promise<boolean>,
  options: { what: string; timeoutMs: number },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  while (!(await ready())) {
    if (peer.child.exitCode !== null)
      throw new Error(`${peer.name} exited with ${peer.child.exitCode}\n${peer.output()}`);
    if (Date.now() > deadline)
      throw new Error(`${peer.name} did not ${options.what} within ${options.timeoutMs} ms\n${peer.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export async function startChild(
  name: string,
  script: string,
  args: string[],
  options: SpawnOptions = {},
): Promise<Child> {
  return spawnChild(name, [...(options.nodeArgs ?? []), '--import', 'tsx', join(BENCH_DIR, script), ...args], options, {
    readyLine: (line) => (line.startsWith('ready') ? line.slice('ready'.length).trim() : null),
  });
}

/** What every bench's daemon runs with unless its caller says otherwise. */
const BENCH_DAEMON_DEFAULTS = {
  NODE_ENV: 'production',
  HOST: '127.0.0.1',
  // The limiter must not throttle the bench's load generator, one IP.
  RATE_LIMIT_MAX: '10000000',
  LOG_LEVEL: 'warn',
};

/**
 * The daemon as an operator starts it: `node bin/svc.js daemon start`, running its compiled build
 * (made by `npm run build`, or on this start when the sources changed), configured by `env` over
 * BENCH_DAEMON_DEFAULTS, on a free port unless PORT is given. A node with the API is ready when
 * /health/ready answers 200 (readyText: its URL); a worker node, which listens on nothing, when it
 * logs "daemon ready" (it logs at info for that: it serves no requests, so nothing per message is
 * logged).
 */
export async function startDaemonProcess(
  name: string,
  given: Record<string, string> & { ROLE: string },
  options: Omit<SpawnOptions, 'env'> = {},
): Promise<Child> {
  const env = { ...BENCH_DAEMON_DEFAULTS, PORT: String(await freePort()), ...given };
  const argv = [...(options.nodeArgs ?? []), join(ROOT_DIR, 'bin', 'svc.js'), 'daemon', 'start'];
  // A worker node or an SMTP edge (ROLE=smtp) serves no HTTP: ready when it says so.
  if (env.ROLE === 'worker' || env.ROLE === 'smtp') {
    return spawnChild(
      name,
      argv,
      { ...options, env: { ...env, LOG_LEVEL: 'info' } },
      {
        readyLine: (line) => (line.includes('"daemon ready"') ? '' : null),
      },
    );
  }
  const url = `http://${env.HOST}:${env.PORT}`;
  return spawnChild(
    name,
    argv,
    { ...options, env },
    {
      probe: () =>
        fetch(`${url}/health/ready`).then(
          (response) => (response.status === 200 ? url : null),
          () => null,
        ),
    },
  );
}

interface Readiness {
  /** The ready text when this line of stdout says the child is ready, else null. */
  readyLine?: (line: string) => string | null;
  /** Polled every 50 ms: the ready text once ready, else null. */
  probe?: () => Promise<string | null>;
}

async function spawnChild(name: string, argv: string[], options: SpawnOptions, readiness: Readiness): Promise<Child> {
  const child = spawn(process.execPath, argv, {
    cwd: ROOT_DIR,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const readyText = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    let ready = false;
    const timeoutMs = options.readyTimeoutMs ?? 120_000;
    const becameReady = (text: string) => {
      if (ready) return;
      ready = true;
      clearTimeout(timer);
      resolve(text);
    };
    const timer = setTimeout(
      () => reject(new Error(`${name} did not start within ${timeoutMs} ms\n${stderr}`)),
      timeoutMs,
    );
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      let newline: number;
      while ((newline = buffered.indexOf('\n')) !== -1) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        const text = ready ? null : (readiness.readyLine?.(line) ?? null);
        if (text !== null) becameReady(text);
        else if (ready) lines.push(line);
      }
    });
    if (readiness.probe) {
      const probe = readiness.probe;
      void (async () => {
        while (!ready && child.exitCode === null) {
          const text = await probe();
          if (text !== null) becameReady(text);
          else await new Promise((wait) => setTimeout(wait, 50));
        }
      })();
    }
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
    .filter((file) => file.startsWith(`${pid}-`) && file.endsWith('.count'))
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
