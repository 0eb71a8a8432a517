import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { CliFailure, EXIT } from '../../errors.ts';

export default class DbMigrate extends SvcCommand<typeof DbMigrate> {
  static override summary = 'Apply pending database migrations without starting the daemon.';
  static override description =
    'Uses DATABASE_URL, or the embedded database in DATA_DIR when it is unset, like `svc daemon start`. ' +
    'The daemon applies migrations at boot too; this is for deploy pipelines that migrate first.';
  static override examples = [
    'DATABASE_URL=postgres://svc@db/svc <%= config.bin %> db migrate',
    '<%= config.bin %> db migrate --data-dir ./data --json',
  ];
  static override showHeader = false;
  static override flags = {
    'database-url': Flags.string({ description: 'PostgreSQL connection string', env: 'DATABASE_URL' }),
    'data-dir': Flags.string({
      description: 'where the embedded database lives (when no DATABASE_URL)',
      env: 'DATA_DIR',
    }),
  };

  async run(): Promise<{ applied: string[]; database: string }> {
    const { loadConfig, ConfigError } = await import('../../../daemon/config.ts');
    const { openDatabase, redactUrl } = await import('../../../daemon/db/index.ts');
    const { migrateUp } = await import('../../../daemon/db/migrate.ts');
    const env: Record<string, string | undefined> = { ...process.env, LOG_LEVEL: 'warn' };
    if (this.flags['database-url']) env.DATABASE_URL = this.flags['database-url'];
    if (this.flags['data-dir']) env.DATA_DIR = this.flags['data-dir'];
    let config;
    try {
      config = loadConfig(env);
    } catch (error) {
      if (error instanceof ConfigError)
        throw new CliFailure(`Configuration: ${error.message}`, EXIT.usage, 'BAD_CONFIG');
      throw error;
    }
    const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    try {
      const applied = await migrateUp(db.sequelize, (line) => this.logToStderr(line));
      const database = db.embedded ? `embedded PGlite in ${config.dataDir}` : redactUrl(db.url);
      this.log(
        applied.length
          ? `Applied ${applied.length} migration(s) to ${database}:\n  ${applied.join('\n  ')}`
          : `${database} is up to date.`,
      );
      return { applied, database };
    } finally {
      await db.close();
    }
  }
}
