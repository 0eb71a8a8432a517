// The React Email sandbox over HTTP: a good template renders; hostile JSX (loops, memory bombs,
// reaching files, env, require/import, escapes through constructors) is answered 4xx within the
// limit, and the daemon stays healthy after each case.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createApiKey, createWorld } from './helpers/fixtures.ts';
import { assertErrorBody } from './helpers/error-body.ts';
import { SANDBOX_LIMITS } from '../daemon/render/react-email/sandbox.ts';

let ctx: TestContext;
let world: Awaited<ReturnType<typeof createWorld>>;

test.before(async () => {
  ctx = await createTestContext();
  world = await createWorld(ctx.app);
});
test.after(async () => {
  await ctx?.close();
});

const render = (jsx: string, props: Record<string, unknown> = {}) =>
  ctx.app.inject({ method: 'POST', url: '/templates/render-react-email', headers: world.asOwner, payload: { jsx, props } });

async function assertHealthy(): Promise<void> {
  const res = await ctx.app.inject({ method: 'GET', url: '/health' });
  assert.is(res.statusCode, 200);
}

const WELCOME = `
import { Html, Body, Heading, Text, Button } from '@react-email/components';
import * as React from 'react';

export default function Welcome({ name, url }: { name: string; url: string }) {
  const [greeting] = React.useState('Welcome');
  return (
    <Html lang="en">
      <Body>
        <Heading>{greeting}, {name}</Heading>
        <Text>Your account is ready.</Text>
        <Button href={url}>Open the dashboard</Button>
      </Body>
    </Html>
  );
}`;

test('a React Email template renders to an HTML document and a text part; props are escaped', async () => {
  const res = await render(WELCOME, { name: '<b>Ann</b>', url: 'https://app.example.test/' });
  assert.is(res.statusCode, 200, res.body);
  const { html, text } = res.json();
  assert.match(html, /^<!DOCTYPE html/);
  assert.ok(html.includes('Welcome, <!-- -->&lt;b&gt;Ann&lt;/b&gt;') || html.includes('&lt;b&gt;Ann&lt;/b&gt;'));
  assert.ok(html.includes('href="https://app.example.test/"'));
  assert.match(text, /Your account is ready\./);
  assert.match(text, /Open the dashboard/);
});

test('imports outside the allow-list and syntax errors are 400 with a sentence', async () => {
  for (const [jsx, pattern] of [
    ["import fs from 'fs';\nexport default () => null;", /imports "fs", which is not allowed/],
    ["import { readFileSync } from 'node:fs';\nexport default () => <p>{readFileSync('/etc/passwd', 'utf8')}</p>;", /"node:fs"/],
    ["const fs = require('fs');\nexport default () => <p>{fs.readFileSync('/etc/passwd', 'utf8')}</p>;", /"fs"/],
    ["export default async () => { await import('fs'); return <p /> };", /"fs"/],
    ["import x from './local';\nexport default x;", /"\.\/local"/],
    ['export default () => <p>', /does not compile/],
  ] as const) {
    const body = assertErrorBody(await render(jsx), 400, 'VALIDATION_FAILED');
    assert.match(body.message, pattern);
  }
  await assertHealthy();
});

const HOSTILE: Array<{ name: string; jsx: string; code: RegExp }> = [
  { name: 'infinite loop in the component', jsx: 'export default function E() { while (true) {} }', code: /RENDER_TIMEOUT/ },
  { name: 'infinite loop at module top level', jsx: 'while (true) {}\nexport default () => null;', code: /RENDER_TIMEOUT/ },
  { name: 'memory bomb', jsx: 'export default function E() { const a: number[][] = []; while (true) a.push(new Array(1e6).fill(1)); }', code: /RENDER_MEMORY_LIMIT|RENDER_TIMEOUT/ },
  { name: 'process.env', jsx: 'export default () => <p>{process.env.HOME}</p>;', code: /RENDER_FAILED/ },
  { name: 'globalThis.process', jsx: 'export default () => <p>{(globalThis as any).process.env.PATH}</p>;', code: /RENDER_FAILED/ },
  { name: 'require through a variable', jsx: "export default () => { const m = 'fs'; return <p>{require(m).readFileSync('/etc/passwd', 'utf8')}</p>; };", code: /RENDER_FAILED/ },
  { name: 'import() through a variable', jsx: "export default async function E() { const m = 'fs'; const fs = await import(m); return <p>{String(fs)}</p>; }", code: /RENDER_FAILED/ },
  { name: 'this.constructor.constructor', jsx: "const p = (this as any).constructor.constructor('return process')();\nexport default () => <p>{p.env.HOME}</p>;", code: /RENDER_FAILED/ },
  { name: '({}).constructor.constructor', jsx: "export default () => { const p = ({}).constructor.constructor('return process')(); return <p>{p.env.HOME}</p>; };", code: /RENDER_FAILED/ },
  { name: 'Function("return this")', jsx: "export default () => { const g = Function('return this')(); return <p>{g.process.env.HOME}</p>; };", code: /RENDER_FAILED/ },
  { name: 'eval', jsx: "export default () => <p>{eval('1 + 1')}</p>;", code: /RENDER_FAILED/ },
  {
    name: "a host object's constructor",
    jsx: "import * as React from 'react';\nexport default () => { const p = (React.createElement as any).constructor('return process')(); return <p>{p.env.HOME}</p>; };",
    code: /RENDER_FAILED/,
  },
  {
    name: "a host function's prototype constructor",
    jsx: "import * as React from 'react';\nexport default () => { const F = Object.getPrototypeOf(React.createElement).constructor; return <p>{F('return process')().env.HOME}</p>; };",
    code: /RENDER_FAILED/,
  },
  {
    name: 'an async function constructor',
    jsx: "export default () => { const AF = (async () => {}).constructor as any; AF('return process')(); return <p />; };",
    code: /RENDER_FAILED/,
  },
  { name: 'no default export', jsx: 'export const x = 1;', code: /RENDER_NO_COMPONENT/ },
];

for (const hostile of HOSTILE) {
  test(`hostile JSX: ${hostile.name} → 422, daemon healthy`, async () => {
    const started = Date.now();
    const res = await render(hostile.jsx);
    const elapsed = Date.now() - started;
    const body = assertErrorBody(res, 422);
    assert.match(body.code, hostile.code);
    assert.not.match(res.body, /\/root|HOME=|PATH=/);
    // The limit counts from hand-over; allow for a cold worker start on a loaded machine.
    assert.ok(elapsed < SANDBOX_LIMITS.timeoutMs + 4000, `answered after ${elapsed} ms`);
    await assertHealthy();
  });
}

test('a render after the hostile cases still works (a fresh worker per render)', async () => {
  const res = await render('export default ({ n }: { n: number }) => <p>{n + 1}</p>;', { n: 41 });
  assert.is(res.statusCode, 200, res.body);
  assert.match(res.json().html, /<p>42<\/p>/);
});

test('render-react-email takes a session or a key with templates:write (an extension), and validates its body', async () => {
  const narrow = await createApiKey(world.tenantId, { scopes: ['email:send', 'templates:read'] });
  const res = await ctx.app.inject({ method: 'POST', url: '/templates/render-react-email', headers: { authorization: `Bearer ${narrow.key}` }, payload: { jsx: 'export default () => null' } });
  assertErrorBody(res, 403, 'INSUFFICIENT_SCOPE');
  const withScope = await ctx.app.inject({ method: 'POST', url: '/templates/render-react-email', headers: world.asKey, payload: { jsx: 'export default () => null' } });
  assert.is(withScope.statusCode, 200, withScope.body);
  assertErrorBody(await ctx.app.inject({ method: 'POST', url: '/templates/render-react-email', headers: world.asOwner, payload: { props: {} } }), 400, 'VALIDATION_FAILED');
});

test('a react-email template: saved JSX is compiled (bad import refused), previewed with data, subject via Liquid', async () => {
  const bad = await ctx.app.inject({
    method: 'POST', url: '/templates', headers: world.asOwner,
    payload: { name: 'R', slug: 'react-bad', editorMode: 'react-email', subject: 'Hi', jsx: "import fs from 'fs'; export default () => null" },
  });
  assertErrorBody(bad, 400);
  const created = await ctx.app.inject({
    method: 'POST', url: '/templates', headers: world.asOwner,
    payload: { name: 'R', slug: 'react-welcome', editorMode: 'react-email', subject: 'Welcome {{ name }}', jsx: WELCOME },
  });
  assert.is(created.statusCode, 201, created.body);
  const template = created.json();
  const preview = await ctx.app.inject({
    method: 'POST', url: `/templates/${template.id}/versions/${template.versions[0].id}/preview`, headers: world.asOwner,
    payload: { data: { name: 'Ann', url: 'https://app.example.test/' } },
  });
  assert.is(preview.statusCode, 200, preview.body);
  const body = preview.json();
  assert.is(body.subject, 'Welcome Ann');
  assert.match(body.html, /Welcome(<!-- -->)?, (<!-- -->)?Ann/);
  assert.match(body.text, /Open the dashboard/);
});

test.run();
