// The zero-configuration database: PGlite (Postgres compiled to WASM) kept in DATA_DIR and served
// on a loopback port (pglite-server.ts), so Sequelize, pg and the worker threads speak to it exactly
// as they would to a real PostgreSQL server. One backend session shared by every connection:
// slower than PostgreSQL, right for one machine.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { servePglite } from './pglite-server.ts';

export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  const dir = join(dataDir, 'pgdata');
  await mkdir(dir, { recursive: true });
  const db = await PGlite.create(dir);
  const server = await servePglite(db);
  return {
    url: `postgres://postgres@127.0.0.1:${server.port}/postgres`,
    async stop() {
      await server.close();
      await db.close();
    },
  };
}
