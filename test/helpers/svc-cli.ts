// Runs the real `svc` binary as a child process against a daemon listening on a port, with its own
// profile directory (XDG_CONFIG_HOME) so tests never touch the user's profiles.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { TestContext } from './context.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const BIN = join(ROOT, 'bin', 'svc.js');

export interface SvcRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (undefined when it is not JSON). */
  json: any;
}

export interface SvcOptions {
  env?: Record<string, string | undefined>;
  input?: string;
  timeoutMs?: number;
}

export function runSvc(args: string[], options: SvcOptions = {}): Promise<SvcRun> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries({ ...process.env, NO_COLOR: '1', ...options.env })) {
      if (value !== undefined) env[key] = value;
    }
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    // Only a hung child reaches this: a loaded 2-core machine took 16 s to start the binary once.
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 90_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** A CLI environment bound to one listening daemon and one private profile directory. */
export class CliWorld {
  readonly configHome = mkdtempSync(join(tmpdir(), 'svc-cli-'));
  constructor(readonly baseUrl: string) {}

  get profileFile(): string {
    return join(this.configHome, 'svc', 'profiles.json');
  }

  run(args: string[], options: SvcOptions = {}): Promise<SvcRun> {
    return runSvc(args, {
      ...options,
      env: {
        SVC_BASE_URL: this.baseUrl,
        XDG_CONFIG_HOME: this.configHome,
        SVC_API_KEY: undefined,
        SVC_TENANT_ID: undefined,
        SVC_PROFILE: undefined,
        ...options.env,
      },
    });
  }

  /** Writes a profile as `svc login` would (tests that sign in through fixtures). */
  writeProfile(profile: Record<string, string>, name = 'default'): void {
    mkdirSync(dirname(this.profileFile), { recursive: true });
    const existing = existsSync(this.profileFile)
      ? JSON.parse(readFileSync(this.profileFile, 'utf8'))
      : { profiles: {} };
    existing.profiles[name] = { ...existing.profiles[name], ...profile };
    writeFileSync(this.profileFile, JSON.stringify(existing), { mode: 0o600 });
  }

  cleanup(): void {
    rmSync(this.configHome, { recursive: true, force: true });
  }
}

/** Starts the test context's app on a free port and answers its base URL. */
export async function listen(ctx: TestContext): Promise<string> {
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const address = ctx.app.server.address() as { port: number };
  return `http://127.0.0.1:${address.port}`;
}
