// The React Email sandbox over HTTP: a good template renders; hostile JSX (loops, memory bombs,
// reaching files, env, require/import, escapes through constructors) is answered 4xx within the
// limit, and the daemon stays healthy after each case.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createApiKey, createWorld } from './helpers/fixtures.ts';
import { assertErrorBody } from './helpers/error-body.ts';
import { SANDBOX_LIMITS } from '../daemon/render/react-email/sandbox.ts';
import { RssWatchdog } from '../daemon/render/react-email/rss-watchdog.ts';

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
  ctx.app.inject({
    method: 'POST',
    url: '/templates/render-react-email',
    headers: world.asOwner,
    payload: { jsx, props },
  });

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
    [
      "import { readFileSync } from 'node:fs';\nexport default () => <p>{readFileSync('/etc/passwd', 'utf8')}</p>;",
      /"node:fs"/,
    ],
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
  {
    name: 'infinite loop in the component',
    jsx: 'export default function E() { while (true) {} }',
    code: /RENDER_TIMEOUT/,
  },
  {
    name: 'infinite loop at module top level',
    jsx: 'while (true) {}\nexport default () => null;',
    code: /RENDER_TIMEOUT/,
  },
  {
    name: 'memory bomb',
    jsx: 'export default function E() { const a: number[][] = []; while (true) a.push(new Array(1e6).fill(1)); }',
    code: /RENDER_MEMORY_LIMIT|RENDER_TIMEOUT/,
  },
  { name: 'process.env', jsx: 'export default () => <p>{process.env.HOME}</p>;', code: /RENDER_FAILED/ },
  {
    name: 'globalThis.process',
    jsx: 'export default () => <p>{(globalThis as any).process.env.PATH}</p>;',
    code: /RENDER_FAILED/,
  },
  {
    name: 'require through a variable',
    jsx: "export default () => { const m = 'fs'; return <p>{require(m).readFileSync('/etc/passwd', 'utf8')}</p>; };",
    code: /RENDER_FAILED/,
  },
  {
    name: 'import() through a variable',
    jsx: "export default async function E() { const m = 'fs'; const fs = await import(m); return <p>{String(fs)}</p>; }",
    code: /RENDER_FAILED/,
  },
  {
    name: 'this.constructor.constructor',
    jsx: "const p = (this as any).constructor.constructor('return process')();\nexport default () => <p>{p.env.HOME}</p>;",
    code: /RENDER_FAILED/,
  },
  {
    name: '({}).constructor.constructor',
    jsx: "export default () => { const p = ({}).constructor.constructor('return process')(); return <p>{p.env.HOME}</p>; };",
    code: /RENDER_FAILED/,
  },
  {
    name: 'Function("return this")',
    jsx: "export default () => { const g = Function('return this')(); return <p>{g.process.env.HOME}</p>; };",
    code: /RENDER_FAILED/,
  },
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

// Off-heap memory: typed arrays and their buffers live outside the V8 heap that resourceLimits bounds, so
// each kind is a separate way to take the host's memory (4 × 256 MiB, touched with fill).
const MIB256 = '256 * 1024 * 1024';
const OFF_HEAP: Array<{ name: string; jsx: string }> = [
  {
    name: '4 × 256 MiB Uint8Array, filled',
    jsx: `export default () => { const a = []; for (let i = 0; i < 4; i++) a.push(new Uint8Array(${MIB256}).fill(1)); return <p>{a.length}</p>; };`,
  },
  {
    name: '4 × 256 MiB Float64Array',
    jsx: `export default () => { const a = []; for (let i = 0; i < 4; i++) a.push(new Float64Array(${MIB256} / 8)); return <p>{a.length}</p>; };`,
  },
  {
    name: 'ArrayBuffer',
    jsx: `export default () => { const a = []; for (let i = 0; i < 4; i++) a.push(new ArrayBuffer(${MIB256})); return <p>{a.length}</p>; };`,
  },
  {
    name: 'SharedArrayBuffer',
    jsx: `export default () => { const a = []; for (let i = 0; i < 4; i++) a.push(new SharedArrayBuffer(${MIB256})); return <p>{a.length}</p>; };`,
  },
  {
    name: 'DataView over a big buffer',
    jsx: `export default () => { const v = new DataView(new ArrayBuffer(${MIB256})); v.setUint8(0, 1); return <p>{v.byteLength}</p>; };`,
  },
  {
    name: 'a growing resizable ArrayBuffer',
    jsx: `export default () => { const b = new (ArrayBuffer as any)(0, { maxByteLength: 4 * ${MIB256} }); for (let i = 1; i <= 4; i++) b.resize(i * ${MIB256}); return <p>{b.byteLength}</p>; };`,
  },
  {
    name: 'WebAssembly.Memory grown to 1 GiB',
    jsx: 'export default () => { const m = new WebAssembly.Memory({ initial: 1, maximum: 16384 }); m.grow(16383); return <p>{m.buffer.byteLength}</p>; };',
  },
  {
    name: 'a typed array subclass',
    jsx: `class Big extends Uint8Array {}\nexport default () => <p>{new Big(${MIB256}).length}</p>;`,
  },
  {
    name: 'Uint8Array.from an array-like',
    jsx: `export default () => <p>{Uint8Array.from({ length: ${MIB256} }).length}</p>;`,
  },
];

for (const hostile of OFF_HEAP) {
  test(`off-heap bomb: ${hostile.name} → 422 RENDER_MEMORY_LIMIT, daemon healthy`, async () => {
    const res = await render(hostile.jsx);
    const body = assertErrorBody(res, 422, 'RENDER_MEMORY_LIMIT');
    assert.match(body.message, /outside the JavaScript heap|more than/);
    await assertHealthy();
  });
}

test('concurrent off-heap bombs: all refused 422 while /health keeps answering 200', async () => {
  const bomb = OFF_HEAP[0]!.jsx;
  let rendering = true;
  const healthChecks: number[] = [];
  const health = (async () => {
    while (rendering) {
      const res = await ctx.app.inject({ method: 'GET', url: '/health' });
      healthChecks.push(res.statusCode);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  const answers = await Promise.all(Array.from({ length: 6 }, () => render(bomb)));
  rendering = false;
  await health;
  for (const res of answers) assertErrorBody(res, 422, 'RENDER_MEMORY_LIMIT');
  assert.ok(healthChecks.length >= 2, `health was checked ${healthChecks.length} times`);
  assert.equal([...new Set(healthChecks)], [200]);
});

// The renderer's own realm, where React runs, keeps its constructors (react-dom writes into 4 KiB views) but
// a template can be handed its objects. Each path from such an object to an allocation must hit the budget.
const HOST_REALM_PROBE = `
const { parentPort, workerData } = require('node:worker_threads');
import(workerData.offHeapUrl).then(({ budgetThisRealm, createOffHeapBudget }) => {
  const budget = createOffHeapBudget(32 * 1024 * 1024);
  budgetThisRealm(budget);
  const big = 256 * 1024 * 1024;
  const small = Buffer.from('x');
  const attempts = {
    'new Uint8Array': () => new Uint8Array(big),
    'instance.constructor': () => new (new Uint16Array(1).constructor)(big),
    'Buffer.prototype chain': () => new (Object.getPrototypeOf(Buffer))(big),
    'new ArrayBuffer': () => new ArrayBuffer(big),
    'resizable ArrayBuffer': () => new ArrayBuffer(0, { maxByteLength: 4 * big }),
    'new SharedArrayBuffer': () => new SharedArrayBuffer(big),
    'Buffer.alloc': () => Buffer.alloc(big),
    'Buffer.allocUnsafe': () => Buffer.allocUnsafe(big),
    'Buffer.allocUnsafeSlow': () => Buffer.allocUnsafeSlow(big),
    'Buffer.concat with a total': () => Buffer.concat([small], big),
    'species of a subclass': () => { class Sub extends Float64Array {} return new Sub(big / 8); },
    'slice in a loop': () => { const b = new Uint8Array(8 * 1024 * 1024); for (let i = 0; i < 10; i++) b.slice(); },
  };
  const results = {};
  for (const [name, attempt] of Object.entries(attempts)) {
    try { attempt(); results[name] = 'allocated'; } catch (error) { results[name] = String(error.message); }
  }
  parentPort.postMessage({ results, webAssembly: typeof WebAssembly, refusal: budget.refusal });
});`;

test("the renderer's realm: every allocating path a template could be handed is charged to the render's budget", async () => {
  const { Worker } = await import('node:worker_threads');
  const offHeapUrl = new URL('../daemon/render/react-email/off-heap.mjs', import.meta.url).href;
  const worker = new Worker(HOST_REALM_PROBE, { eval: true, workerData: { offHeapUrl } });
  const answer = await new Promise<{ results: Record<string, string>; webAssembly: string; refusal: string | null }>(
    (resolve, reject) => {
      worker.once('message', resolve).once('error', reject);
    },
  );
  await worker.terminate();
  for (const [name, outcome] of Object.entries(answer.results)) {
    assert.match(outcome, /outside the JavaScript heap/, `${name}: ${outcome}`);
  }
  assert.is(Object.keys(answer.results).length, 12);
  assert.is(answer.webAssembly, 'undefined');
  assert.match(answer.refusal ?? '', /a render may use at most 32 MB there/);
});

test('the RSS watchdog ends every running render once the daemon grows past their joint allowance, and only then', () => {
  const MB = 1024 * 1024;
  let rss = 500 * MB;
  const watchdog = new RssWatchdog({ perRenderBytes: 100 * MB, intervalMs: 60_000, readRss: () => rss });
  const aborted: string[] = [];
  const stopA = watchdog.watch((error) => aborted.push(`a:${error.code}`));
  const stopB = watchdog.watch((error) => aborted.push(`b:${error.code}`));
  rss = 700 * MB; // two renders may add 200 MB
  watchdog.check();
  assert.equal(aborted, []);
  rss = 701 * MB;
  watchdog.check();
  assert.equal(aborted.sort(), ['a:RENDER_MEMORY_LIMIT', 'b:RENDER_MEMORY_LIMIT']);
  stopA();
  stopB();
  // A new first render takes a new baseline, so memory kept by earlier ones is not charged to it.
  aborted.length = 0;
  const stopC = watchdog.watch((error) => aborted.push(`c:${error.message}`));
  rss = 780 * MB;
  watchdog.check();
  assert.equal(aborted, []);
  rss = 802 * MB;
  watchdog.check();
  assert.is(aborted.length, 1);
  assert.match(aborted[0]!, /grew by 101 MB while 1 template\(s\) rendered, more than the 100 MB/);
  stopC();
});

test('a render after the hostile cases still works (a fresh worker per render)', async () => {
  const res = await render('export default ({ n }: { n: number }) => <p>{n + 1}</p>;', { n: 41 });
  assert.is(res.statusCode, 200, res.body);
  assert.match(res.json().html, /<p>42<\/p>/);
});

test('render-react-email takes a session or a key with templates:write (an extension), and validates its body', async () => {
  const narrow = await createApiKey(world.tenantId, { scopes: ['email:send', 'templates:read'] });
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/templates/render-react-email',
    headers: { authorization: `Bearer ${narrow.key}` },
    payload: { jsx: 'export default () => null' },
  });
  assertErrorBody(res, 403, 'INSUFFICIENT_SCOPE');
  const withScope = await ctx.app.inject({
    method: 'POST',
    url: '/templates/render-react-email',
    headers: world.asKey,
    payload: { jsx: 'export default () => null' },
  });
  assert.is(withScope.statusCode, 200, withScope.body);
  assertErrorBody(
    await ctx.app.inject({
      method: 'POST',
      url: '/templates/render-react-email',
      headers: world.asOwner,
      payload: { props: {} },
    }),
    400,
    'VALIDATION_FAILED',
  );
});

test('a react-email template: saved JSX is compiled (bad import refused), previewed with data, subject via Liquid', async () => {
  const bad = await ctx.app.inject({
    method: 'POST',
    url: '/templates',
    headers: world.asOwner,
    payload: {
      name: 'R',
      slug: 'react-bad',
      editorMode: 'react-email',
      subject: 'Hi',
      jsx: "import fs from 'fs'; export default () => null",
    },
  });
  assertErrorBody(bad, 400);
  const created = await ctx.app.inject({
    method: 'POST',
    url: '/templates',
    headers: world.asOwner,
    payload: {
      name: 'R',
      slug: 'react-welcome',
      editorMode: 'react-email',
      subject: 'Welcome {{ name }}',
      jsx: WELCOME,
    },
  });
  assert.is(created.statusCode, 201, created.body);
  const template = created.json();
  const preview = await ctx.app.inject({
    method: 'POST',
    url: `/templates/${template.id}/versions/${template.versions[0].id}/preview`,
    headers: world.asOwner,
    payload: { data: { name: 'Ann', url: 'https://app.example.test/' } },
  });
  assert.is(preview.statusCode, 200, preview.body);
  const body = preview.json();
  assert.is(body.subject, 'Welcome Ann');
  assert.match(body.html, /Welcome(<!-- -->)?, (<!-- -->)?Ann/);
  assert.match(body.text, /Open the dashboard/);
});

test.run();
