// `svc` runs from its build (cli/build.mjs): oclif finds every command of cli/commands.ts through the
// build's manifest, with the flags the source declares, and loads only the file of the one that runs.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureCliBuild } from '../cli/build.mjs';
import { COMMANDS } from '../cli/commands.ts';
import { REPO_ROOT } from '../shared/build-cache.mjs';

interface CachedCommand {
  id: string;
  flags: Record<string, unknown>;
  isESM: boolean;
  relativePath: string[];
}

test('the manifest lists every command with its flags and the file that holds it', async () => {
  const build = await ensureCliBuild();
  assert.is(await ensureCliBuild(), build, 'unchanged sources reuse the build');
  const manifest = JSON.parse(readFileSync(join(build, 'oclif.manifest.json'), 'utf8')) as {
    commands: Record<string, CachedCommand>;
  };
  assert.equal(Object.keys(manifest.commands).sort(), Object.keys(COMMANDS).sort());
  for (const [id, command] of Object.entries(COMMANDS)) {
    const cached = manifest.commands[id];
    for (const flag of Object.keys({ ...command.baseFlags, ...command.flags }))
      assert.ok(flag in cached.flags, `svc ${id} --${flag}`);
    assert.ok(existsSync(join(build, ...cached.relativePath)), `svc ${id}: ${cached.relativePath.join('/')}`);
  }
  const packageJson = JSON.parse(readFileSync(join(build, 'package.json'), 'utf8'));
  const repoPackageJson = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
  assert.is(packageJson.version, repoPackageJson.version);
  assert.equal(packageJson.oclif.topics, repoPackageJson.oclif.topics);
});

test('svc runs without a TypeScript loader and prints only what the command prints', () => {
  const env = { ...process.env, NODE_OPTIONS: '' };
  const version = spawnSync(process.execPath, [join(REPO_ROOT, 'bin/svc.js'), '--version'], { env, encoding: 'utf8' });
  assert.is(version.status, 0, version.stderr);
  assert.match(version.stdout, /^svc-email\/\S+ \S+ node-v\S+\n$/);
  assert.is(version.stderr, '');
  const unknown = spawnSync(process.execPath, [join(REPO_ROOT, 'bin/svc.js'), 'templats', 'lst', '--json'], {
    env,
    encoding: 'utf8',
  });
  assert.is(unknown.status, 2);
  assert.is(JSON.parse(unknown.stdout).error.code, 'COMMAND_NOT_FOUND');
});

test.run();
