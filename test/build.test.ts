// The daemon runs from its compiled build (daemon/build.mjs): made once per set of sources, reused
// while they are unchanged, with relative .ts specifiers (imports and worker paths) pointing at .js.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDaemonBuild, rewriteRelativeSpecifiers } from '../daemon/build.mjs';

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

test.run();
