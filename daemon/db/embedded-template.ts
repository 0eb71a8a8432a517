// The embedded database's template: a PGlite data directory with initdb run and every migration
// applied, kept beside the build that holds those migrations. A new DATA_DIR starts as a copy of it
// instead of running initdb inside WebAssembly and the migrations over the single-session wire
// server (≈ 5.4 s of a ≈ 7 s first boot on a quiet 2-core machine; issue 27 §4), and then opens as a
// restart does. Like Debian's postgresql package, which runs initdb at install, `npm run build` makes
// it once per build: the build's directory is keyed by the hash of the sources (migrations included)
// and the installed packages (PGlite's version included), so a template never outlives its schema.
import { cp, mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EMBEDDED_TEMPLATE_PATH, startEmbeddedPostgres } from './embedded.ts';
import { connectSequelize } from './index.ts';
import { migrateUp } from './migrate.ts';

/**
 * Makes the template at `path`: a scratch data directory, initdb, every migration, a clean shutdown,
 * then the closed directory copied under another name and renamed, so that a concurrent first boot
 * sees a whole template or none.
 */
export async function makeEmbeddedTemplate(path = EMBEDDED_TEMPLATE_PATH): Promise<string> {
  const scratch = await mkdtemp(join(tmpdir(), 'svc-embedded-template-'));
  const partial = `${path}.${process.pid}.partial`;
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
    await cp(join(scratch, 'pgdata'), partial, { recursive: true });
    await rename(partial, path);
    return path;
  } finally {
    await rm(scratch, { recursive: true, force: true });
    await rm(partial, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.stdout.write(`embedded database template written to ${await makeEmbeddedTemplate()}\n`);
}
