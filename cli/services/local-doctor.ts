// `svc doctor --local`: the daemon's own checks, run in this process from the daemon's environment
// (the same variables `svc daemon start` reads), so an operator can check a node before it boots.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { CliFailure, EXIT } from '../errors.ts';
import type { DoctorReport } from '../../shared/schemas/doctor.ts';

export async function runLocalDoctor(env: NodeJS.ProcessEnv = process.env): Promise<DoctorReport> {
  const { loadConfig, ConfigError } = await import('../../daemon/config.ts');
  const { openDatabase } = await import('../../daemon/db/index.ts');
  const { runDoctor } = await import('../../daemon/modules/doctor/service.ts');
  const { loadSecrets } = await import('../../daemon/secrets.ts');
  let config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError)
      throw new CliFailure(`Configuration: ${error.message}`, EXIT.usage, 'BAD_CONFIGURATION');
    throw error;
  }
  if (config.databaseUrl === null) {
    throw new CliFailure(
      'svc doctor --local needs DATABASE_URL: the embedded database belongs to the running daemon. Run `svc doctor` (signed in as a platform admin) to ask the daemon instead.',
      EXIT.usage,
      'NO_DATABASE_URL',
    );
  }
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolMax: 2 }).catch(
    (error: Error) => {
      throw new CliFailure(error.message, EXIT.unreachable, 'DATABASE_UNREACHABLE');
    },
  );
  const redis = config.redisUrl
    ? new Redis(config.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false })
    : null;
  redis?.on('error', () => {});
  await redis?.connect().catch(() => {});
  try {
    // Never generate a secret here: only an existing one (JWT_SECRET or DATA_DIR/secret.key) is checked.
    const secrets =
      config.jwtSecret || existsSync(join(config.dataDir, 'secret.key'))
        ? loadSecrets(config.dataDir, config.jwtSecret)
        : null;
    return await runDoctor({ config, secrets, sequelize: db.sequelize, redis, embedded: false });
  } finally {
    redis?.disconnect();
    await db.close();
  }
}
