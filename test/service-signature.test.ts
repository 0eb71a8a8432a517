// One service signature (issue 50 §4): a service is `(deps, ctx, input)` and takes its models from `deps`
// (`modelsOf(deps.db.sequelize)`, daemon/modules/models.ts), never from a model file's import — the state a
// service touches is then all in its arguments, as STYLE.md §10 asks (state made at wiring, passed in).
// Read with the TypeScript compiler's parser, so a comment or a string that names a model does not count:
//   - no file of daemon/modules/ value-imports a Sequelize model class (`import type` is fine: a row's type
//     is not the connection), except the model files, the registry that binds them, and the known files
//     listed below — a listed file that no longer imports one fails too, so the list only shrinks;
//   - an exported function whose first parameter is its deps names it `deps` and uses it (`_deps` was how a
//     service said "I reach the global models instead");
//   - an exported function of a service file that takes a TenantContext takes it second, named `ctx`, with
//     at most one input after it: `(deps, ctx)` or `(deps, ctx, input)`.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '..');
const MODULES = join(ROOT, 'daemon/modules');

/** Files that still import a model class, each with why; the list only shrinks. */
const KNOWN_GLOBAL_MODEL_IMPORTS: Record<string, string> = {};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

const parsed = new Map<string, ts.SourceFile>();
function parse(file: string): ts.SourceFile {
  let source = parsed.get(file);
  if (!source) {
    source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    parsed.set(file, source);
  }
  return source;
}

const isModelFile = (file: string) => basename(file) === 'model.ts';
const REGISTRY = join(MODULES, 'models.ts');
const files = sourceFiles(MODULES);

/** Each model file's Sequelize model classes (`class X extends Model<…>`), by absolute path. */
const modelClasses = new Map<string, Set<string>>();
for (const file of files.filter(isModelFile)) {
  const classes = new Set<string>();
  for (const node of parse(file).statements)
    if (
      ts.isClassDeclaration(node) &&
      node.name &&
      node.heritageClauses?.some((clause) =>
        clause.types.some((type) => ts.isIdentifier(type.expression) && type.expression.text === 'Model'),
      )
    )
      classes.add(node.name.text);
  if (classes.size > 0) modelClasses.set(file, classes);
}

/** The model classes a file imports as values. */
function globalModelsOf(file: string): string[] {
  const found: string[] = [];
  for (const node of parse(file).statements) {
    if (!ts.isImportDeclaration(node) || !ts.isStringLiteral(node.moduleSpecifier)) continue;
    if (!node.moduleSpecifier.text.startsWith('.') || node.importClause?.isTypeOnly) continue;
    const classes = modelClasses.get(resolve(dirname(file), node.moduleSpecifier.text));
    const bindings = node.importClause?.namedBindings;
    if (!classes || !bindings) continue;
    if (ts.isNamespaceImport(bindings)) found.push(`* as ${bindings.name.text}`);
    else
      for (const element of bindings.elements)
        if (!element.isTypeOnly && classes.has((element.propertyName ?? element.name).text))
          found.push(element.name.text);
  }
  return found;
}

interface ExportedFunction {
  file: string;
  name: string;
  parameters: readonly ts.ParameterDeclaration[];
  body: ts.Node | undefined;
}

function exportedFunctions(file: string): ExportedFunction[] {
  const out: ExportedFunction[] = [];
  const exported = (node: ts.Node) =>
    ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  for (const node of parse(file).statements) {
    if (!exported(node)) continue;
    if (ts.isFunctionDeclaration(node) && node.name)
      out.push({ file, name: node.name.text, parameters: node.parameters, body: node.body });
    else if (ts.isVariableStatement(node))
      for (const declaration of node.declarationList.declarations) {
        const init = declaration.initializer;
        if (init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init)))
          out.push({ file, name: declaration.name.getText(), parameters: init.parameters, body: init.body });
      }
  }
  return out;
}

function uses(body: ts.Node | undefined, name: string): boolean {
  let found = false;
  const visit = (node: ts.Node): void => {
    if (found) return;
    if (ts.isIdentifier(node) && node.text === name) found = true;
    else ts.forEachChild(node, visit);
  };
  if (body) visit(body);
  return found;
}

const where = (file: string) => relative(ROOT, file);

test('the registry knows the model classes the files define (the check below sees them)', () => {
  const names = [...modelClasses.values()].flatMap((set) => [...set]);
  assert.ok(names.length >= 20, `only ${names.length} model classes found: ${names.join(', ')}`);
  const registry = readFileSync(REGISTRY, 'utf8');
  const missing = names.filter((name) => !new RegExp(`\\b${name}: typeof ${name};`).test(registry));
  assert.equal(
    missing,
    [],
    `daemon/modules/models.ts's Models names every model class; missing: ${missing.join(', ')}`,
  );
});

test('no module file imports a global Sequelize model: its models come from deps (modelsOf)', () => {
  const offenders: string[] = [];
  const stillNeeded = new Set<string>();
  for (const file of files) {
    if (isModelFile(file) || file === REGISTRY) continue;
    const models = globalModelsOf(file);
    if (models.length === 0) continue;
    if (where(file) in KNOWN_GLOBAL_MODEL_IMPORTS) stillNeeded.add(where(file));
    else offenders.push(`${where(file)} imports ${models.join(', ')}`);
  }
  assert.equal(
    offenders,
    [],
    `take the models from deps instead: const { Model } = modelsOf(deps.db.sequelize) (import type for row types):\n  ${offenders.join('\n  ')}`,
  );
  const gone = Object.keys(KNOWN_GLOBAL_MODEL_IMPORTS).filter((file) => !stillNeeded.has(file));
  assert.equal(gone, [], `no longer imports a model: remove from KNOWN_GLOBAL_MODEL_IMPORTS: ${gone.join(', ')}`);
});

test('a function that takes deps names it deps and uses it (no _deps)', () => {
  const offenders: string[] = [];
  let services = 0;
  for (const file of files)
    for (const fn of exportedFunctions(file)) {
      const first = fn.parameters[0]?.name;
      if (!first || !ts.isIdentifier(first) || !/^_?deps$/.test(first.text)) continue;
      services += 1;
      if (first.text !== 'deps') offenders.push(`${where(file)} ${fn.name}(${first.text}, …): name it deps and use it`);
      else if (!uses(fn.body, 'deps')) offenders.push(`${where(file)} ${fn.name}(deps, …) never uses deps`);
    }
  assert.ok(services >= 150, `only ${services} exported functions take deps first: did the parse miss them?`);
  assert.equal(offenders, [], offenders.join('\n'));
});

test("a service file's tenant services are (deps, ctx) or (deps, ctx, input)", () => {
  const offenders: string[] = [];
  let checked = 0;
  for (const file of files.filter((f) => /^service|-service\.ts$/.test(basename(f)) || basename(f) === 'service.ts'))
    for (const fn of exportedFunctions(file)) {
      const tenantAt = fn.parameters.findIndex((p) => p.type?.getText() === 'TenantContext');
      if (tenantAt < 0) continue;
      checked += 1;
      const names = fn.parameters.map((p) => p.name.getText());
      if (tenantAt !== 1 || names[0] !== 'deps' || !/^_?ctx$/.test(names[1]) || names.length > 3)
        offenders.push(`${where(file)} ${fn.name}(${names.join(', ')})`);
    }
  assert.ok(checked >= 40, `only ${checked} tenant services found: did the parse miss them?`);
  assert.equal(offenders, [], `expected (deps, ctx, input):\n  ${offenders.join('\n  ')}`);
});

test.run();
