// The embedded database's template: a PGlite data directory with initdb run and every migration
// applied, packed as a gzipped tar beside the build that holds those migrations. A new DATA_DIR is
// unpacked from it instead of running initdb inside WebAssembly and the migrations over the
// single-session wire server (≈ 5.4 s of a ≈ 7 s first boot on a quiet 2-core machine; issue 27 §4).
// Like Debian's postgresql package, which runs initdb at install, `npm run build` makes it once
// per build: the build's directory is keyed by the hash of the sources (migrations included) and the
// installed packages (PGlite's version included), so a template never outlives its schema.
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EMBEDDED_TEMPLATE_PATH, startEmbeddedPostgres } from './embedded.ts';
import { connectSequelize } from './index.ts';
import { migrateUp } from './migrate.ts';

/**
 * Makes the template at `path`: a scratch data directory, initdb, every migration, then PGlite's
 * own dump of the closed directory. Written under another name and renamed, so a concurrent boot
 * sees a whole template or none.
 */
export async function makeEmbeddedTemplate(path = EMBEDDED_TEMPLATE_PATH): Promise<string> {
  const scratch = await mkdtemp(join(tmpdir(), 'svc-embedded-template-'));
  try {
    const embedded = await startEmbeddedPostgres(scratch, { templatePath: null });
    try {
      const sequelize = connectSequelize(embedded.url, 1);
      try {
        await migrateUp(sequelize);
      } finally {
        await sequelize.close();
      }
    } finally {
      await embedded.stop();
    }
    const { PGlite } = await import('@electric-sql/pglite');
    const closed = await PGlite.create(join(scratch, 'pgdata'));
    const tarball = await closed.dumpDataDir('gzip');
    await closed.close();
    const partial = `${path}.${process.pid}.partial`;
    await writeFile(partial, Buffer.from(await tarball.arrayBuffer()));
    await rename(partial, path);
    return path;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.stdout.write(`embedded database template written to ${await makeEmbeddedTemplate()}\n`);
}
