// The zero-configuration database: PGlite (Postgres compiled to WASM) kept in DATA_DIR and served
// on a loopback port by pglite-socket, so Sequelize, pg and the worker threads speak to it exactly
// as they would to a real PostgreSQL server. Slow (one backend, multiplexed), right for one machine.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  const dir = join(dataDir, 'pgdata');
  await mkdir(dir, { recursive: true });
  const db = await PGlite.create(dir);
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 64 });
  await server.start();
  // getServerConn() answers "host:port" with the port the OS picked.
  return {
    url: `postgres://postgres@${server.getServerConn()}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
