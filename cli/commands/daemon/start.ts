import { Command, Flags } from '@oclif/core';
import { DAEMON_START_FLAGS, startDaemonProcess } from '../../../daemon/start.mjs';

// bin/svc.js runs `svc daemon start` through daemon/start.mjs without loading the CLI (so the daemon
// process carries no CLI framework or TypeScript loader); this command gives it help and completion
// and, when reached (e.g. from code that calls the CLI in-process), runs the same start.
const flag = (name: keyof typeof DAEMON_START_FLAGS) => ({
  description: DAEMON_START_FLAGS[name].description,
  env: DAEMON_START_FLAGS[name].env,
});

export default class DaemonStart extends Command {
  static override summary = 'Run the daemon (API and workers) in the foreground.';
  static override description =
    'Takes the same settings as the environment variables of the README; a flag wins over its variable. ' +
    'With no DATABASE_URL the daemon runs on an embedded PostgreSQL (PGlite) kept in DATA_DIR. ' +
    'The daemon runs compiled JavaScript, built into .build/ when the sources changed (`npm run build` does it ' +
    'ahead, at install); a read-only code directory without that build builds into DATA_DIR/build/.';
  static override examples = [
    '<%= config.bin %> daemon start',
    '<%= config.bin %> daemon start --port 8080 --role api',
    'DATABASE_URL=postgres://localhost/svc REDIS_URL=redis://localhost <%= config.bin %> daemon start',
  ];

  static override flags = {
    port: Flags.string(flag('port')),
    host: Flags.string(flag('host')),
    role: Flags.option({ options: ['api', 'worker', 'smtp', 'all'] as const, ...flag('role') })(),
    'data-dir': Flags.string(flag('data-dir')),
    'database-url': Flags.string(flag('database-url')),
    'redis-url': Flags.string(flag('redis-url')),
    'smtp-url': Flags.string(flag('smtp-url')),
  };

  async run(): Promise<void> {
    await startDaemonProcess(this.argv);
  }
}
