// No import cycle in the daemon (issue 30): every relative import of daemon/**/*.ts — static, type-only,
// re-export or dynamic import() — read with the TypeScript compiler's parser, and the graph searched
// for strongly connected components (Tarjan). A cycle fails with its files named. Type-only imports
// count too: they are how a layer starts to lean on the one above it.
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

test.run();
