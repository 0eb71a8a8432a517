// A client generated from the live daemon's /openapi.json is enough to send a mail: openapi-typescript
// turns the document into types, a small program calls the daemon through openapi-fetch with ONLY those
// types, `tsc --noEmit` (strict) checks it, and then it runs against the daemon over HTTP. A second program
// makes mistakes the document must catch (a wrong field type, a missing required field, a nullable read
// as a string, an enum narrowed, the error body's code as a number, an unknown path), so a document that
// types anything as `unknown` or `any` fails here too. (A misspelt extra field is not among them: openapi-
// fetch infers the body as a type parameter, so TypeScript makes no excess-property check there.)
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueryTypes } from 'sequelize';
import openapiTS, { astToString } from 'openapi-typescript';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { addVerifiedDomain, createWorld } from './helpers/fixtures.ts';

let ctx: TestContext;
let world: Awaited<ReturnType<typeof createWorld>>;
let baseUrl: string;
const dir = mkdtempSync(join(tmpdir(), 'svc-openapi-client-'));
const nodeModules = new URL('../node_modules', import.meta.url).pathname;

test.before(async () => {
  ctx = await createTestContext();
  world = await createWorld(ctx.app);
  await addVerifiedDomain(ctx.db.sequelize, ctx.deps.secrets, world.tenantId, 'acme.test');
  baseUrl = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  symlinkSync(nodeModules, join(dir, 'node_modules'));
});
test.after(async () => {
  await ctx?.close();
  rmSync(dir, { recursive: true, force: true });
});

function run(file: string, args: string[], cwd = dir): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, timeout: 180_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
    );
  });
}

const TSCONFIG = {
  compilerOptions: {
    strict: true,
    noEmit: true,
    target: 'es2022',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    allowImportingTsExtensions: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    skipLibCheck: true,
    types: ['node'],
  },
  files: ['client.ts', 'mistakes.ts'],
};

// Uses the generated `paths` and nothing else: no type is written by hand.
const CLIENT = `import createClient from 'openapi-fetch';
import type { paths } from './api.ts';

const [baseUrl, apiKey, tenantId] = process.argv.slice(2) as [string, string, string];
const client = createClient<paths>({ baseUrl, headers: { authorization: 'Bearer ' + apiKey } });

const sent = await client.POST('/emails/send', {
  params: { header: { 'x-tenant-id': tenantId } },
  body: { from: 'Acme <hello@acme.test>', to: ['ann@example.test'], subject: 'Typed hello', textBody: 'Sent by a generated client.', tags: ['generated'] },
});
if (sent.error) {
  const code: string = sent.error.code;
  console.log(JSON.stringify({ failed: code, message: sent.error.message }));
  process.exit(1);
}
const status: 'QUEUED' | 'SENT' | 'FAILED' | 'DELIVERED' | 'BOUNCED' = sent.data.status;
const rateLimitReset = sent.response.headers.get('x-ratelimit-reset');

const log = await client.GET('/emails/logs/{id}', { params: { path: { id: sent.data.id }, header: { 'x-tenant-id': tenantId } } });
if (log.error) {
  console.log(JSON.stringify({ failed: log.error.code }));
  process.exit(1);
}
const sentAt: string | null = log.data.sentAt;
const to: string[] = log.data.to;
const missing = await client.GET('/emails/logs/{id}', { params: { path: { id: '00000000-0000-4000-8000-000000000000' } } });
const missingCode: string | undefined = missing.error?.code;
console.log(JSON.stringify({ id: sent.data.id, status, rateLimitReset, log: { status: log.data.status, subject: log.data.subject, from: log.data.from, to, tags: log.data.tags, sentAt }, missing: { status: missing.response.status, code: missingCode } }));
`;

// Each line is a mistake the generated types must refuse; the test asserts tsc names every one of them.
const MISTAKES = `import createClient from 'openapi-fetch';
import type { paths } from './api.ts';

const client = createClient<paths>({ baseUrl: 'http://127.0.0.1' });
export async function mistakes(): Promise<void> {
  await client.POST('/emails/send', { body: { from: 'a@acme.test', to: 'b@example.test', tags: 'one' } }); // MISTAKE 1
  await client.POST('/emails/send', { body: { to: 'b@example.test' } }); // MISTAKE 2
  const log = await client.GET('/emails/logs/{id}', { params: { path: { id: 'x' } } });
  if (log.data) { const sentAt: string = log.data.sentAt; console.log(sentAt); } // MISTAKE 3
  if (log.data) { const status: 'QUEUED' = log.data.status; console.log(status); } // MISTAKE 4
  if (log.error) { const code: number = log.error.code; console.log(code); } // MISTAKE 5
  await client.GET('/emails/nowhere', {}); // MISTAKE 6
}
`;

test('a client generated from the live /openapi.json type-checks (strict) and refuses wrong calls', async () => {
  const response = await fetch(`${baseUrl}/openapi.json`);
  assert.is(response.status, 200);
  const document = await response.json();
  const types = astToString(await openapiTS(document));
  // The error body is one shared component, so the generator emits one type and every error refers to it.
  assert.match(types, /ErrorBody: \{/);
  assert.ok(
    (types.match(/components\["schemas"\]\["ErrorBody"\]/g) ?? []).length > 100,
    'errors refer to the one ErrorBody',
  );
  writeFileSync(join(dir, 'api.ts'), types);
  writeFileSync(join(dir, 'client.ts'), CLIENT);
  writeFileSync(join(dir, 'mistakes.ts'), MISTAKES);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
  const checked = await run(join(nodeModules, '.bin/tsc'), ['-p', join(dir, 'tsconfig.json')]);
  const errors = checked.output.split('\n').filter((line) => /error TS\d+/.test(line));
  assert.equal(
    errors.filter((line) => !line.startsWith('mistakes.ts')),
    [],
    'the client program type-checks',
  );
  const mistakeLines = MISTAKES.split('\n').flatMap((line, index) => (line.includes('// MISTAKE') ? [index + 1] : []));
  const reported = new Set(errors.map((line) => Number(/^mistakes\.ts\((\d+),/.exec(line)?.[1])));
  for (const line of mistakeLines)
    assert.ok(reported.has(line), `tsc lets line ${line} of mistakes.ts through:\n${checked.output}`);
  assert.is(checked.code, 2);
});

test('the generated client sends a mail through the live daemon and reads it back', async () => {
  const ran = await run(process.execPath, ['--import', 'tsx', 'client.ts', baseUrl, world.key.key, world.tenantId]);
  assert.is(ran.code, 0, ran.output);
  const answer = JSON.parse(ran.output.trim().split('\n').at(-1)!);
  assert.is(answer.status, 'QUEUED');
  assert.ok(
    Number(answer.rateLimitReset) > Date.now() / 1000,
    `X-RateLimit-Reset ${answer.rateLimitReset} is a Unix time`,
  );
  assert.equal(answer.log, {
    status: 'QUEUED',
    subject: 'Typed hello',
    from: '"Acme" <hello@acme.test>',
    to: ['ann@example.test'],
    tags: ['generated'],
    sentAt: null,
  });
  assert.equal(answer.missing, { status: 404, code: 'NOT_FOUND' });
  const rows = await ctx.db.sequelize.query<{
    tenant_id: string;
    api_key_id: string;
    status: string;
    subject: string;
    to_addresses: string[];
    text_body: string;
  }>('SELECT tenant_id, api_key_id, status, subject, to_addresses, text_body FROM email_logs WHERE id = :id', {
    replacements: { id: answer.id },
    type: QueryTypes.SELECT,
  });
  assert.equal(rows, [
    {
      tenant_id: world.tenantId,
      api_key_id: world.key.id,
      status: 'QUEUED',
      subject: 'Typed hello',
      to_addresses: ['ann@example.test'],
      text_body: 'Sent by a generated client.',
    },
  ]);
});

test.run();
