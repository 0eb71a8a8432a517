// No import cycle in the daemon (issue 30): every relative import of daemon/**/*.ts — static, type-only,
// re-export or dynamic import() — read with the TypeScript compiler's parser, and the graph searched
// for strongly connected components (Tarjan). A cycle fails with its files named. Type-only imports
// count too: they are how a layer starts to lean on the one above it.
//
// The folders form layers (issue 50 §1, ARCHITECTURE.md "Layers"), and an import only ever points down:
// `config`/`errors`/`logging` → `db/` → `queue/`, `render/` → `mail/` → `mta/` → `modules/` → `plugins/`,
// `smtp/`, `jobs/` → `app.ts`, `main.ts`. What a lower layer needs from a module is handed to it at wiring
// (a port). An arrow from a lower folder to a higher one fails with both files named, unless it is one of
// the known arrows listed below; a listed arrow that no longer exists fails too, so the list only shrinks.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const DAEMON = resolve(import.meta.dirname, '../daemon');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The daemon files one file imports, by absolute path. */
function importsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const specifiers: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) specifiers.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      specifiers.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => resolve(dirname(file), specifier))
    .filter((path) => path.startsWith(DAEMON) && existsSync(path));
}

/** Groups of files that import each other, directly or around a loop (Tarjan's algorithm). */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const lowest = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (file: string): void => {
    index.set(file, counter);
    lowest.set(file, counter++);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        connect(next);
        lowest.set(file, Math.min(lowest.get(file)!, lowest.get(next)!));
      } else if (onStack.has(next)) {
        lowest.set(file, Math.min(lowest.get(file)!, index.get(next)!));
      }
    }
    if (lowest.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.get(file)!.includes(file)) cycles.push(component);
  };
  for (const file of graph.keys()) if (!index.has(file)) connect(file);
  return cycles;
}

test('the cycle finder finds a loop of three and ignores a chain', () => {
  const graph = new Map([
    ['a', ['b']],
    ['b', ['c']],
    ['c', ['a', 'd']],
    ['d', []],
  ]);
  assert.equal(
    cyclesOf(graph).map((cycle) => cycle.sort()),
    [['a', 'b', 'c']],
  );
  assert.equal(
    cyclesOf(
      new Map([
        ['x', ['y']],
        ['y', []],
      ]),
    ),
    [],
  );
});

test('no file of daemon/ imports itself around a loop', () => {
  const files = sourceFiles(DAEMON);
  assert.ok(files.length > 100, `found the daemon's files (${files.length})`);
  const graph = new Map(files.map((file) => [file, importsOf(file)]));
  assert.ok(
    [...graph.values()].some((imports) => imports.length > 0),
    'imports were read',
  );
  const cycles = cyclesOf(graph).map((cycle) =>
    cycle
      .map((file) => relative(DAEMON, file))
      .sort()
      .join(' ⇄ '),
  );
  assert.equal(cycles, [], `import cycles in daemon/:\n${cycles.join('\n')}`);
});

/**
 * The layer of a daemon file, lowest first; undefined for a folder the order does not place yet.
 * The files at daemon/'s root that import nothing above `config` sit with it (secrets, TLS, context,
 * a route's access rule, small caches); app-types.ts is the contract modules are built against
 * (ModuleDeps) and sits with them; openapi.ts is part of the app's wiring.
 */
const LAYERS: Array<[number, RegExp]> = [
  [0, /^(config|errors|logging|ehlo-name|context|access|secrets|tls|ttl-cache)\.ts$|^crypto\//],
  [1, /^db\//],
  [2, /^(queue|render)\//],
  [3, /^mail\//],
  [4, /^mta\//],
  [5, /^modules\/|^app-types\.ts$/],
  [6, /^(plugins|smtp|jobs)\//],
  [7, /^(app|main|openapi)\.ts$|^(build|start)\.mjs$/],
];

function layerOf(path: string): number | undefined {
  return LAYERS.find(([, pattern]) => pattern.test(path))?.[0];
}

/**
 * Arrows that still point up, each `lower file → higher file` (paths under daemon/), with why it is not
 * turned round yet. Remove a line when its arrow goes; never add one.
 */
const KNOWN_UPWARD_ARROWS: string[] = [];

test('every file of daemon/ has a layer', () => {
  const unplaced = sourceFiles(DAEMON)
    .map((file) => relative(DAEMON, file))
    .filter((path) => layerOf(path) === undefined);
  assert.equal(unplaced, [], `files outside the folder order (add their folder to LAYERS):\n${unplaced.join('\n')}`);
});

test('the layer order knows the folders of the architecture, lowest first', () => {
  const order = [
    'config.ts',
    'db/x.ts',
    'queue/x.ts',
    'mail/x.ts',
    'mta/x.ts',
    'modules/x/y.ts',
    'jobs/x.ts',
    'app.ts',
  ];
  const layers = order.map((path) => layerOf(path)!);
  assert.equal(
    layers,
    [...layers].sort((a, b) => a - b),
  );
  assert.equal(layerOf('render/x.ts'), layerOf('queue/x.ts'));
  assert.equal(layerOf('plugins/x.ts'), layerOf('smtp/x.ts'));
  assert.equal(layerOf('main.ts'), layerOf('app.ts'));
});

test('no import of daemon/ points from a lower layer to a higher one, beyond the known arrows', () => {
  const arrows: string[] = [];
  for (const file of sourceFiles(DAEMON)) {
    const from = relative(DAEMON, file);
    for (const target of importsOf(file)) {
      const to = relative(DAEMON, target);
      if ((layerOf(from) ?? 0) < (layerOf(to) ?? 0)) arrows.push(`${from} → ${to}`);
    }
  }
  const found = [...new Set(arrows)].sort();
  const unknown = found.filter((arrow) => !KNOWN_UPWARD_ARROWS.includes(arrow));
  const gone = KNOWN_UPWARD_ARROWS.filter((arrow) => !found.includes(arrow));
  assert.equal(
    unknown,
    [],
    `imports that point up a layer (pass a port at wiring, or move the code down):\n${unknown.join('\n')}`,
  );
  assert.equal(
    gone,
    [],
    `listed arrows that no longer exist (remove them from KNOWN_UPWARD_ARROWS):\n${gone.join('\n')}`,
  );
});

test.run();
