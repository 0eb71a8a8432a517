import { Command, Flags } from '@oclif/core';

export default class DaemonStart extends Command {
  static override summary = 'Run the daemon (API and workers) in the foreground.';
  static override description =
    'Takes the same settings as the environment variables of the README; a flag wins over its variable. ' +
    'With no DATABASE_URL the daemon runs on an embedded PostgreSQL (PGlite) kept in DATA_DIR.';
  static override examples = [
    '<%= config.bin %> daemon start',
    '<%= config.bin %> daemon start --port 8080 --role api',
    'DATABASE_URL=postgres://localhost/svc REDIS_URL=redis://localhost <%= config.bin %> daemon start',
  ];

  static override flags = {
    port: Flags.integer({ description: 'port to listen on', env: 'PORT' }),
    host: Flags.string({ description: 'address to listen on', env: 'HOST' }),
    role: Flags.option({ options: ['api', 'worker', 'all'] as const, description: 'run the API, the workers, or both', env: 'ROLE' })(),
    'data-dir': Flags.string({ description: 'where the embedded database, captured mail and secrets live', env: 'DATA_DIR' }),
    'database-url': Flags.string({ description: 'PostgreSQL connection string', env: 'DATABASE_URL' }),
    'redis-url': Flags.string({ description: 'Redis connection string', env: 'REDIS_URL' }),
    'smtp-url': Flags.string({ description: 'default SMTP relay, e.g. smtp://user:pass@host:587', env: 'SMTP_URL' }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(DaemonStart);
    const { loadConfig, ConfigError } = await import('../../../daemon/config.ts');
    const { runDaemon } = await import('../../../daemon/main.ts');
    const env: Record<string, string | undefined> = { ...process.env };
    const set = (name: string, value: string | number | undefined) => {
      if (value !== undefined) env[name] = String(value);
    };
    set('PORT', flags.port);
    set('HOST', flags.host);
    set('ROLE', flags.role);
    set('DATA_DIR', flags['data-dir']);
    set('DATABASE_URL', flags['database-url']);
    set('REDIS_URL', flags['redis-url']);
    set('SMTP_URL', flags['smtp-url']);
    try {
      await runDaemon(loadConfig(env));
    } catch (error) {
      if (error instanceof ConfigError) this.error(`Configuration: ${error.message}`, { exit: 78 });
      this.error(error instanceof Error ? error.message : String(error), { exit: 1 });
    }
  }
}
