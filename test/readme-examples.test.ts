// The README's shell examples are a contract: every fenced block tagged `sh svc-example` is run, in order,
// in one bash process against a live daemon, with `svc` on PATH as `node bin/svc.js`. Blocks without the
// tag (placeholders, other people's sections) are left alone.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { Op } from 'sequelize';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { listen } from './helpers/svc-cli.ts';
import { Template, TemplateVersion } from '../daemon/modules/templates/model.ts';
import { EmailLog } from '../daemon/modules/emails/model.ts';

const ROOT = new URL('..', import.meta.url).pathname;

function readmeExamples(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh svc-example\n([\s\S]*?)^```$/gm)].map((match) => match[1]);
}

let ctx: TestContext;
let baseUrl: string;
const work = mkdtempSync(join(tmpdir(), 'svc-readme-'));

test.before(async () => {
  ctx = await createTestContext();
  baseUrl = await listen(ctx);
});
test.after(async () => {
  rmSync(work, { recursive: true, force: true });
  await ctx?.close();
});

function bash(script: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => resolve({ code, output }));
  });
}

test('the README has tagged examples, and each is a non-empty shell block', () => {
  const blocks = readmeExamples(readFileSync(join(ROOT, 'README.md'), 'utf8'));
  assert.ok(blocks.length >= 3, `found ${blocks.length} svc-example blocks`);
  for (const block of blocks) assert.ok(block.trim() !== '');
});

test('every svc-example block of the README runs against a live daemon, in order', async () => {
  const bin = join(work, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'svc'), `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, 'bin', 'svc.js')}" "$@"\n`);
  chmodSync(join(bin, 'svc'), 0o755);
  const blocks = readmeExamples(readFileSync(join(ROOT, 'README.md'), 'utf8'));
  const script = [
    'set -euo pipefail',
    ...blocks.map((block, index) => `echo "### README example ${index + 1}"\n${block}`),
  ].join('\n');
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env))
    if (value !== undefined && !key.startsWith('SVC_')) env[key] = value;
  Object.assign(env, {
    PATH: `${bin}:${process.env.PATH}`,
    SVC_BASE_URL: baseUrl,
    SVC_PASSWORD: 'correct-horse-battery',
    XDG_CONFIG_HOME: join(work, 'config'),
    NO_COLOR: '1',
  });
  const run = await bash(script, env);
  assert.is(run.code, 0, run.output);
  assert.not.match(run.output, 'svc_live_', 'no key reaches the terminal');
  const welcome = await Template.findOne({ where: { slug: 'welcome' } });
  assert.ok(welcome, run.output);
  assert.ok(
    await TemplateVersion.findOne({ where: { templateId: welcome!.id, publishedAt: { [Op.ne]: null } } }),
    'pushed and published',
  );
  const sent = await EmailLog.findOne({ where: { tenantId: welcome!.tenantId } });
  assert.equal(sent?.toAddresses, ['a@example.com']);
});

test.run();
