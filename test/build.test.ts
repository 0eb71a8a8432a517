// The daemon runs from its compiled build (daemon/build.mjs): made once per set of sources, reused
// while they are unchanged, with relative .ts specifiers (imports and worker paths) pointing at .js.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isBuiltin } from 'node:module';
import { relative } from 'node:path';
import { BUNDLED_ENTRIES, ensureDaemonBuild, REPO_ROOT, rewriteRelativeSpecifiers } from '../daemon/build.mjs';
import { DAEMON_WORKERS, MTA_WORKER, SHARED_DAEMON_WORKERS } from '../daemon/jobs/index.ts';

test('relative .ts/.tsx specifiers become .js; packages and other strings stay', () => {
  const source = `import { a } from "./a.ts";\nconst b = await import('../b/c.tsx');\nconst w = here("./send-worker.ts");\nimport x from 'pkg.ts';\nconst s = "file.ts";`;
  assert.is(
    rewriteRelativeSpecifiers(source),
    `import { a } from "./a.js";\nconst b = await import('../b/c.js');\nconst w = here("./send-worker.js");\nimport x from 'pkg.ts';\nconst s = "file.ts";`,
  );
});

test('ensureDaemonBuild compiles daemon, shared and migrations once and reuses the build', async () => {
  const first = await ensureDaemonBuild();
  const second = await ensureDaemonBuild();
  assert.is(first, second, 'unchanged sources reuse the build');
  assert.ok(existsSync(join(first, '.complete')));
  for (const file of [
    'daemon/main.js',
    'daemon/jobs/bootstrap.mjs',
    'daemon/jobs/background.js',
    'daemon/render/react-email/sandbox-worker.mjs',
    'migrations/0001-core.js',
    'shared/constants.js',
  ]) {
    assert.ok(existsSync(join(first, file)), file);
  }
  const jobs = readFileSync(join(first, 'daemon/jobs/index.js'), 'utf8');
  assert.match(jobs, /here\("\.\/send-worker\.js"\)/);
  assert.not.match(jobs, /from "[^"]+\.ts"/);
  const { loadConfig } = await import(join(first, 'daemon/config.js'));
  assert.is(loadConfig({ WORKER_THREADS: 'separate' }).workerThreads, 'separate');
});

test('the daemon and every worker thread run from one bundle each, finding their files where the sources put them', async () => {
  const build = await ensureDaemonBuild();
  for (const worker of [...DAEMON_WORKERS, ...SHARED_DAEMON_WORKERS, MTA_WORKER])
    assert.ok(BUNDLED_ENTRIES.includes(relative(REPO_ROOT, worker.module)), `${worker.name} is bundled`);
  const main = readFileSync(join(build, 'daemon/main.js'), 'utf8');
  // No package is imported at boot from node_modules: fastify, sequelize, pino… are inside.
  const imported = [...main.matchAll(/^import (?:.* from )?"([^"]+)";$/gm)].map((match) => match[1]);
  assert.ok(imported.length > 0);
  assert.equal(
    imported.filter((specifier) => !isBuiltin(specifier)),
    [],
  );
  // jobs/index.ts finds its worker files, migrate.ts the migrations, beside their own built file.
  assert.match(main, /new URL\("\.\/jobs\/index\.js", import\.meta\.url\)/);
  assert.match(main, /new URL\("\.\/db\/migrate\.js", import\.meta\.url\)/);
  assert.match(main, /here\("\.\/send-worker\.js"\)/);
  const { MIGRATIONS_DIR } = await import(join(build, 'daemon/db/migrate.js'));
  assert.is(MIGRATIONS_DIR, join(build, 'migrations'));
});

test.run();
