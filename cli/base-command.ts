// What every svc command shares: --json, --profile, the header line, the client, and failures
// reported as one sentence with an exit code from errors.ts.
import { Command, Errors, Flags, type Interfaces } from '@oclif/core';
import chalk from 'chalk';
import { applyColourPreference, readCliEnvironment, type CliEnvironment } from './environment.ts';
import { CliFailure, EXIT, ApiRequestError, MissingInputError, redactSecrets, toContractError } from './errors.ts';
import { SvcClient } from './client.ts';
import { DEFAULT_PROFILE } from './profiles.ts';
import { isInteractive } from './ui/tty.ts';
import { asInvoked } from './invocation.ts';
import { unknownFlagDetails, unknownFlagSentence } from './flag-suggest.ts';

export type SvcFlags<T extends typeof Command> = Interfaces.InferredFlags<
  (typeof SvcCommand)['baseFlags'] & T['flags']
>;
export type SvcArgs<T extends typeof Command> = Interfaces.InferredArgs<T['args']>;

export abstract class SvcCommand<T extends typeof Command> extends Command {
  static override enableJsonFlag = true;
  static override baseFlags = {
    profile: Flags.string({
      description: `stored profile to use (default "${DEFAULT_PROFILE}")`,
      env: 'SVC_PROFILE',
      helpGroup: 'GLOBAL',
    }),
    insecure: Flags.boolean({
      description:
        'allow credentials over plain http:// to a non-loopback daemon (lab networks only; warns every time)',
      env: 'SVC_INSECURE',
      helpGroup: 'GLOBAL',
    }),
    ca: Flags.string({
      description: 'PEM file of a private certificate authority to trust for the daemon (or NODE_EXTRA_CA_CERTS)',
      env: 'SVC_CA_FILE',
      helpGroup: 'GLOBAL',
    }),
  };
  /** Commands that act in a tenant print "profile · tenant · daemon" on stderr in human mode. */
  static showHeader = true;
  /**
   * The operationIds of /openapi.json this command calls: test/cli-coverage.test.ts fails for an admin
   * operation no command lists, and the in-process test runner fails a command that calls one it does not list.
   */
  static operations: readonly string[] = [];

  protected flags!: SvcFlags<T>;
  protected args!: SvcArgs<T>;
  /** Every positional argument (commands with `strict = false` take many). */
  protected positionals!: string[];
  protected environment!: CliEnvironment;
  private cachedClient?: SvcClient;

  override async init(): Promise<void> {
    await super.init();
    this.environment = readCliEnvironment();
    applyColourPreference(this.environment);
    const ctor = this.ctor as typeof SvcCommand & T;
    const { args, flags, argv } = await this.parse({
      flags: ctor.flags,
      baseFlags: (super.ctor as typeof SvcCommand).baseFlags,
      enableJsonFlag: ctor.enableJsonFlag,
      args: ctor.args,
      strict: ctor.strict,
    });
    this.flags = flags as SvcFlags<T>;
    this.args = args as SvcArgs<T>;
    const base = flags as { insecure?: boolean; ca?: string };
    this.environment.transport = {
      insecure: base.insecure === true || this.environment.transport.insecure,
      caFile: base.ca ?? this.environment.transport.caFile ?? this.client.http.profile.caFile,
    };
    this.positionals = argv as string[];
    if (ctor.showHeader && !this.jsonEnabled()) this.printHeader();
  }

  protected get profileName(): string {
    return this.flags.profile ?? DEFAULT_PROFILE;
  }

  protected get client(): SvcClient {
    this.cachedClient ??= new SvcClient(this.profileName, this.environment);
    return this.cachedClient;
  }

  protected get interactive(): boolean {
    return isInteractive();
  }

  /** A value a prompt would have asked for: fails with a sentence naming the flag when there is no terminal. */
  protected requireInput<V>(value: V | undefined, flag: string, what: string): V {
    if (value === undefined || value === '') throw new MissingInputError(`Pass ${flag}: ${what}`);
    return value;
  }

  private printHeader(): void {
    const http = this.client.http;
    const who = http.usesApiKey ? 'API key (SVC_API_KEY)' : `profile ${http.profileName}`;
    const tenant = http.tenantId
      ? `tenant ${http.tenantName ? `${http.tenantName} ` : ''}${chalk.dim(`(${http.tenantId})`)}`
      : http.usesApiKey
        ? "the key's tenant"
        : chalk.yellow('no tenant');
    const line = chalk.dim('svc · ') + `${who} · ${tenant}` + chalk.dim(` · ${http.baseUrl}`);
    // One line even in a narrow terminal: a wrapped header pushes the screens' own header off the top.
    const width = process.stderr.isTTY ? process.stderr.columns : undefined;
    this.logToStderr(width ? truncateVisible(line, width - 1) : line);
  }

  override async catch(error: Error & { exitCode?: number; oclif?: { exit?: number } }): Promise<unknown> {
    const secrets = [this.environment?.apiKey ?? readCliEnvironment().apiKey];
    const unknownFlags = (error as { flags?: unknown }).flags;
    if (Array.isArray(unknownFlags) && unknownFlags.length && /^Nonexistent flag/.test(error.message)) {
      // One sentence with the closest flag, not oclif's page of usage.
      const ctor = this.ctor as typeof SvcCommand;
      const known = Object.keys({ ...ctor.baseFlags, ...ctor.flags, ...(ctor.enableJsonFlag ? { json: true } : {}) });
      const command = (this.id ?? '').split(':').join(' ');
      const typed = unknownFlags as string[];
      error = new CliFailure(
        unknownFlagSentence(command, typed, known),
        EXIT.usage,
        'USAGE',
        unknownFlagDetails(typed, known),
      );
    }
    // A next step in the sentence (`svc login`) is printed the way svc was run (`node bin/svc.js login`).
    error.message = asInvoked(error.message);
    if (this.jsonEnabled()) {
      // One contract object on stdout, never oclif's error with its parse context (which holds the environment).
      const contract = toContractError(error, secrets);
      process.exitCode = contract.error.exitCode;
      this.logJson(contract);
      return undefined;
    }
    if (error instanceof CliFailure) {
      process.exitCode = error.exitCode;
      const message = redactSecrets(error.message + validationLines(error), secrets);
      return super.catch(
        Object.assign(new Errors.CLIError(message, { exit: error.exitCode, code: error.code }), {
          exitCode: error.exitCode,
        }),
      );
    }
    if (error.oclif?.exit !== undefined) process.exitCode = error.oclif.exit;
    error.message = redactSecrets(error.message, secrets);
    return super.catch(error);
  }
}

/** Cuts a line with colour codes to `width` visible characters. */
function truncateVisible(line: string, width: number): string {
  let visible = 0;
  let out = '';
  for (const part of line.split(/(\u001b\[[0-9;]*m)/)) {
    if (part.startsWith('\u001b[')) {
      out += part;
      continue;
    }
    const room = width - visible;
    if (part.length > room) return `${out}${part.slice(0, Math.max(0, room - 1))}…\u001b[0m`;
    out += part;
    visible += part.length;
  }
  return out;
}

/** Validation answers name each field: "  to: must be an e-mail address", one per line. */
function validationLines(error: CliFailure): string {
  if (!(error instanceof ApiRequestError) || !error.body.details?.length) return '';
  return '\n' + error.body.details.map((detail) => `  ${detail.field || '(body)'}: ${detail.message}`).join('\n');
}
