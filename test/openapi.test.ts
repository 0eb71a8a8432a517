// /openapi.json tells a client generator what it needs for every operation: a unique operationId,
// the security requirement (explicitly none on public routes), the X-Tenant-Id header on
// tenant-scoped operations and the rate-limit (and quota) response headers; Redocly's recommended
// rules find no error in it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestContext, type TestContext } from './helpers/context.ts';

let ctx: TestContext;
let document: any;
const dir = mkdtempSync(join(tmpdir(), 'svc-openapi-'));

test.before(async () => {
  ctx = await createTestContext();
  document = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
});
test.after(async () => {
  await ctx?.close();
  rmSync(dir, { recursive: true, force: true });
});

function operations(): Array<{ method: string; path: string; op: any }> {
  return Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ method, path, op })),
  );
}

test('every operation has a unique operationId and an explicit security requirement', () => {
  const all = operations();
  assert.ok(all.length > 100, `${all.length} operations`);
  const ids = all.map(({ op }) => op.operationId);
  assert.ok(
    ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]+$/.test(id)),
    ids.filter((id) => !id).length + ' without',
  );
  assert.is(new Set(ids).size, ids.length, 'operationIds are unique');
  for (const { method, path, op } of all)
    assert.ok(Array.isArray(op.security), `${method} ${path} declares its security`);
  const health = document.paths['/health'].get;
  assert.equal(health.security, [], 'public routes say so');
  assert.equal(document.paths['/emails/send'].post.security, [{ bearer: [] }]);
  assert.is(document.paths['/emails/logs/{id}'].get.operationId, 'getEmailsLogsById');
});

test('tenant-scoped operations declare X-Tenant-Id; answers declare the rate-limit and quota headers', () => {
  const send = document.paths['/emails/send'].post;
  const tenantHeader = send.parameters.find(
    (parameter: any) => parameter.in === 'header' && parameter.name === 'x-tenant-id',
  );
  assert.ok(tenantHeader, 'POST /emails/send has X-Tenant-Id');
  assert.is(tenantHeader.schema.format, 'uuid');
  const scoped = operations().filter(({ op }) =>
    (op.parameters ?? []).some((parameter: any) => parameter.name === 'x-tenant-id'),
  );
  assert.ok(scoped.length >= 70, `${scoped.length} tenant-scoped operations declare the header`);
  assert.not.ok(
    (document.paths['/auth/login'].post.parameters ?? []).some((parameter: any) => parameter.name === 'x-tenant-id'),
  );
  const accepted = send.responses['202'].headers;
  for (const name of [
    'X-RateLimit-Limit',
    'X-RateLimit-Remaining',
    'X-RateLimit-Reset',
    'X-Quota-Limit',
    'X-Quota-Used',
  ])
    assert.ok(accepted[name], name);
  assert.ok(send.responses['429'].headers['Retry-After'], 'Retry-After on 429');
});

test('every error answer points to the one ErrorBody component', () => {
  assert.equal(Object.keys(document.components.schemas), ['ErrorBody']);
  assert.equal(document.components.schemas.ErrorBody.required, ['statusCode', 'error', 'code', 'message']);
  let refs = 0;
  const inline: string[] = [];
  for (const { method, path, op } of operations()) {
    for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
      if (!/^[45]/.test(status)) continue;
      for (const [type, media] of Object.entries((response.content ?? {}) as Record<string, any>)) {
        if (media.schema?.$ref === '#/components/schemas/ErrorBody') refs += 1;
        // Declared exceptions: health checks answer 503 with their own report, unsubscribe pages are HTML.
        else if (!(path.startsWith('/health') && status === '503') && media.schema?.description !== 'an HTML page')
          inline.push(`${method} ${path} ${status} ${type}`);
      }
    }
  }
  assert.equal(inline, []);
  // Errors are JSON on every route, also on the one that otherwise answers a text/event-stream.
  assert.equal(Object.keys(document.paths['/emails/logs/stream'].get.responses['401'].content), ['application/json']);
  assert.ok(refs > 300, `${refs} error answers refer to ErrorBody`);
});

test('Redocly CLI (recommended rules) reports no error', async () => {
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(document));
  const bin = new URL('../node_modules/.bin/redocly', import.meta.url).pathname;
  const result = await new Promise<{ code: number | null; output: string }>((resolve) => {
    execFile(bin, ['lint', file, '--format=summary'], { timeout: 120_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: stdout + stderr }),
    );
  });
  assert.is(result.code, 0, result.output);
  assert.not.match(result.output, /\d+ errors?/);
});

test.run();
