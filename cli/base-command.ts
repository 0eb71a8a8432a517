// What every svc command shares: --json, --profile, the header line, the client, and failures
// reported as one sentence with an exit code from errors.ts.
import { Command, Errors, Flags, type Interfaces } from '@oclif/core';
import chalk from 'chalk';
import { applyColourPreference, readCliEnvironment, type CliEnvironment } from './environment.ts';
import { CliFailure, ApiRequestError, MissingInputError } from './errors.ts';
import { SvcClient } from './client.ts';
import { DEFAULT_PROFILE } from './profiles.ts';
import { isInteractive } from './ui/tty.ts';

export type SvcFlags<T extends typeof Command> = Interfaces.InferredFlags<(typeof SvcCommand)['baseFlags'] & T['flags']>;
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
      description: 'allow credentials over plain http:// to a non-loopback daemon (lab networks only; warns every time)',
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

  protected flags!: SvcFlags<T>;
  protected args!: SvcArgs<T>;
  protected environment!: CliEnvironment;
  private cachedClient?: SvcClient;
  private failure?: CliFailure;

  override async init(): Promise<void> {
    await super.init();
    this.environment = readCliEnvironment();
    applyColourPreference(this.environment);
    const ctor = this.ctor as typeof SvcCommand & T;
    const { args, flags } = await this.parse({
      flags: ctor.flags,
      baseFlags: (super.ctor as typeof SvcCommand).baseFlags,
      enableJsonFlag: ctor.enableJsonFlag,
      args: ctor.args,
      strict: ctor.strict,
    });
    this.flags = flags as SvcFlags<T>;
    this.args = args as SvcArgs<T>;
    const base = flags as { insecure?: boolean; ca?: string };
    this.environment.transport = { insecure: base.insecure === true || this.environment.transport.insecure, caFile: base.ca ?? this.environment.transport.caFile };
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
    const tenant = http.tenantId ? `tenant ${http.tenantName ? `${http.tenantName} ` : ''}${chalk.dim(`(${http.tenantId})`)}` : chalk.yellow('no tenant');
    this.logToStderr(chalk.dim('svc · ') + `${who} · ${tenant}` + chalk.dim(` · ${http.baseUrl}`));
  }

  override async catch(error: Error & { exitCode?: number; oclif?: { exit?: number } }): Promise<unknown> {
    if (error instanceof CliFailure) {
      this.failure = error;
      process.exitCode = error.exitCode;
      return super.catch(Object.assign(new Errors.CLIError(error.message, { exit: error.exitCode, code: error.code }), { exitCode: error.exitCode }));
    }
    if (error.oclif?.exit !== undefined) process.exitCode = error.oclif.exit;
    return super.catch(error);
  }

  protected override toErrorJson(error: unknown): unknown {
    const failure = this.failure;
    if (!failure) return super.toErrorJson(error);
    return {
      error: {
        message: failure.message,
        code: failure.code,
        exitCode: failure.exitCode,
        ...(failure instanceof ApiRequestError ? { status: failure.status, details: failure.body.details } : {}),
      },
    };
  }
}
