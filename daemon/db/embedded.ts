// The zero-configuration database: PGlite (Postgres compiled to WASM) kept in DATA_DIR and served
// on a loopback port (pglite-server.ts), so Sequelize, pg and the worker threads speak to it exactly
// as they would to a real PostgreSQL server. One backend session shared by every connection:
// slower than PostgreSQL, right for one machine.
import { existsSync } from 'node:fs';
import { cp, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { servePglite } from './pglite-server.ts';

/** PostgreSQL settings of the embedded database (one backend session, one machine). */
export const EMBEDDED_SETTINGS = [
  'shared_buffers=16MB',
  'work_mem=2MB',
  'maintenance_work_mem=16MB',
  'temp_buffers=2MB',
  'wal_buffers=1MB',
];
const EMBEDDED_INITIAL_MEMORY_BYTES = 128 * 1024 * 1024; // the smallest the WASM module accepts

/**
 * Where the template of this build lives: the build's root directory (the URL is this file's
 * place in the build, daemon/build.mjs). Run from the sources (tsx), it points into the code
 * directory, where no build puts one: a first boot there runs initdb.
 */
export const EMBEDDED_TEMPLATE_PATH = fileURLToPath(new URL('../../embedded-template', import.meta.url));

export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

export interface EmbeddedStartOptions {
  /**
   * A data directory (embedded-template.ts) that a new data directory starts as a copy of, instead of
   * running initdb; null, or no template there, runs initdb. An existing data directory opens as it is.
   */
  templatePath: string | null;
}

export async function startEmbeddedPostgres(dataDir: string, options: EmbeddedStartOptions): Promise<EmbeddedPostgres> {
  const dir = join(dataDir, 'pgdata');
  await mkdir(dir, { recursive: true });
  // A copy on disk, opened as a restart opens its directory: PGlite's own loadDataDir unpacks a tar
  // through its WebAssembly file system, which left the first boot idling 85 MB above a restart.
  if (
    options.templatePath &&
    !existsSync(join(dir, 'PG_VERSION')) &&
    existsSync(join(options.templatePath, 'PG_VERSION'))
  )
    await cp(options.templatePath, dir, { recursive: true });
  // Loaded here, not at import: a daemon on PostgreSQL, and each worker thread, never needs the WASM build.
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create(dir, {
    // Sized for a laptop: PostgreSQL's defaults (128 MB of shared buffers inside the WASM heap, which
    // never shrinks) made the embedded database most of the daemon's idle memory.
    initialMemory: EMBEDDED_INITIAL_MEMORY_BYTES,
    startParams: [...PGlite.defaultStartParams, ...EMBEDDED_SETTINGS.flatMap((setting) => ['-c', setting])],
  });
  const server = await servePglite(db);
  return {
    url: `postgres://postgres@127.0.0.1:${server.port}/postgres`,
    async stop() {
      await server.close();
      await db.close();
    },
  };
}
