// Runs svc commands inside the test process (no child, no tsx start-up per command) against a daemon
// listening on a port, with a private profile directory. Every request a command makes is matched to an
// operation of /openapi.json: a command that calls an operation it does not declare in `operations` fails
// the run, so the declarations the coverage test counts stay true.
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { Config, type Command } from '@oclif/core';
import { COMMANDS } from '../../cli/commands.ts';
import { CliWorld, type SvcOptions, type SvcRun } from './svc-cli.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

type CommandClass = (new (argv: string[], config: Config) => Command) & {
  operations?: readonly string[];
  run(this: CommandClass, argv: string[], config: Config): Promise<unknown>;
};

/** Operations that no command declares because the HTTP layer makes them itself. */
export const IMPLICIT_OPERATIONS = ['postAuthRefresh'];

interface OperationMatcher {
  operationId: string;
  method: string;
  pattern: RegExp;
}

export function operationMatchers(document: { paths: Record<string, Record<string, { operationId: string }>> }) {
  const matchers: OperationMatcher[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    for (const [method, operation] of Object.entries(methods))
      matchers.push({ operationId: operation.operationId, method: method.toUpperCase(), pattern });
  }
  // A literal segment wins over a parameter (/templates/tags before /templates/{id}).
  const parameters = (matcher: OperationMatcher) => matcher.pattern.source.split('[^/]+').length;
  return matchers.sort((a, b) => parameters(a) - parameters(b));
}

export interface InProcessRun extends SvcRun {
  /** operationIds of the requests the command made, in order. */
  operations: string[];
}

export class InProcessCli extends CliWorld {
  private config: Config | undefined;

  constructor(
    baseUrl: string,
    private readonly matchers: OperationMatcher[],
  ) {
    super(baseUrl);
  }

  /** The real `svc` binary as a child, with the same profile directory: for the few runs that are about
   * the process itself (exit status seen by a shell, stdin, terminal detection, signals). */
  spawn(args: string[], options: SvcOptions = {}): Promise<SvcRun> {
    return super.run(args, options);
  }

  override async run(
    args: string[],
    options: {
      env?: Record<string, string | undefined>;
      input?: string;
      /** As if run as `node bin/svc.js` from the clone (process.argv[1] is the script), so the next steps
       * the command prints name the script the way the spawned binary does (cli/invocation.ts). */
      asScript?: boolean;
    } = {},
  ): Promise<InProcessRun> {
    this.config ??= await Config.load(ROOT);
    const { id, argv } = findCommand(args);
    const command = COMMANDS[id as keyof typeof COMMANDS] as unknown as CommandClass;
    // `svc api` reaches any operation by design; every other command only those it declares.
    const declared = id === 'api' ? null : new Set([...(command.operations ?? []), ...IMPLICIT_OPERATIONS]);
    const env = {
      SVC_BASE_URL: this.baseUrl,
      XDG_CONFIG_HOME: this.configHome,
      SVC_API_KEY: undefined,
      SVC_TENANT_ID: undefined,
      SVC_PROFILE: undefined,
      NO_COLOR: '1',
      ...options.env,
    };
    const saved = Object.fromEntries(Object.keys(env).map((key) => [key, process.env[key]]));
    const operations: string[] = [];
    const undeclared: string[] = [];
    const realFetch = globalThis.fetch;
    const realStdin = Object.getOwnPropertyDescriptor(process, 'stdin')!;
    const realStdout = process.stdout.write.bind(process.stdout);
    const realStderr = process.stderr.write.bind(process.stderr);
    let stdout = '';
    let stderr = '';
    globalThis.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
      const request = input instanceof Request ? input : new Request(input, init);
      const url = new URL(request.url);
      const match = this.matchers.find((m) => m.method === request.method && m.pattern.test(url.pathname));
      const operationId = match?.operationId ?? `${request.method} ${url.pathname}`;
      operations.push(operationId);
      if (declared && !declared.has(operationId)) undeclared.push(operationId);
      return realFetch(input, init);
    };
    Object.defineProperty(process, 'stdin', { value: Readable.from([options.input ?? '']), configurable: true });
    process.stdout.write = ((chunk: string | Uint8Array) => (
      (stdout += String(chunk)),
      true
    )) as typeof process.stdout.write;
    process.stderr.write = ((chunk: string | Uint8Array) => (
      (stderr += String(chunk)),
      true
    )) as typeof process.stderr.write;
    for (const [key, value] of Object.entries(env)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    const realArgv = process.argv;
    if (options.asScript) process.argv = [process.execPath, join(ROOT, 'bin', 'svc.js'), ...args];
    process.exitCode = undefined;
    let code = 0;
    try {
      await command.run(argv, this.config);
      code = Number(process.exitCode ?? 0);
    } catch (error) {
      const exit = (error as { oclif?: { exit?: number } }).oclif?.exit;
      code = exit ?? Number(process.exitCode ?? 1);
      if (exit === undefined && !process.exitCode) stderr += String((error as Error).stack ?? error);
      // What oclif prints of an error that carries its exit code, as the real binary shows it.
      else if (exit !== undefined && (error as Error).message && !/^EEXIT/.test((error as Error).message))
        stderr += `${(error as Error).message}\n`;
    } finally {
      process.argv = realArgv;
      globalThis.fetch = realFetch;
      Object.defineProperty(process, 'stdin', realStdin);
      process.stdout.write = realStdout;
      process.stderr.write = realStderr;
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
      process.exitCode = undefined;
    }
    if (undeclared.length)
      throw new Error(`svc ${id} called ${undeclared.join(', ')}, which its static operations do not list`);
    let json: unknown;
    try {
      json = JSON.parse(stdout);
    } catch {
      json = undefined;
    }
    return { code, stdout, stderr, json, operations };
  }
}

/** "tenants members list --json" → the command id tenants:members:list and the rest of the words. */
function findCommand(args: string[]): { id: string; argv: string[] } {
  for (let words = Math.min(args.length, 4); words > 0; words--) {
    const id = args.slice(0, words).join(':');
    if (id in COMMANDS) return { id, argv: args.slice(words) };
  }
  throw new Error(`no svc command in: ${args.join(' ')}`);
}
