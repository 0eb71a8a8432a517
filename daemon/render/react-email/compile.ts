// Compiles tenant JSX/TSX into one script for the sandbox. The only imports that survive are the
// allowed modules, and those become look-ups in a table the sandbox provides: the script contains no
// `require` and no static `import`, so there is nothing left to resolve at run time.
import type { Message, Plugin } from 'esbuild';
import { ValidationError } from '../../errors.ts';

export const ALLOWED_JSX_IMPORTS = ['react', 'react/jsx-runtime', '@react-email/components'] as const;
export const SANDBOX_GLOBAL_NAME = '__svcTemplate';
export const MAX_JSX_CHARS = 200_000;

const ALLOWED = new Set<string>(ALLOWED_JSX_IMPORTS);
const MODULE_NAMESPACE = 'svc-allowed-module';

function describeImport(path: string): string {
  return `The JSX imports "${path}", which is not allowed: a template may import only react and @react-email/components.`;
}

const allowListPlugin: Plugin = {
  name: 'svc-import-allow-list',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === 'entry-point') return undefined;
      if (ALLOWED.has(args.path)) return { path: args.path, namespace: MODULE_NAMESPACE };
      return { errors: [{ text: describeImport(args.path), detail: { disallowedImport: args.path } }] };
    });
    pluginBuild.onLoad({ filter: /.*/, namespace: MODULE_NAMESPACE }, (args) => ({
      contents: `module.exports = __svcModules[${JSON.stringify(args.path)}];`,
      loader: 'js',
    }));
  },
};

function firstSentence(errors: Message[]): string {
  const disallowed = errors.find((e) => (e.detail as { disallowedImport?: string } | undefined)?.disallowedImport);
  if (disallowed) return disallowed.text;
  const first = errors[0];
  if (!first) return 'The JSX does not compile.';
  const where = first.location ? ` (line ${first.location.line}, column ${first.location.column + 1})` : '';
  return `The JSX does not compile: ${first.text}${where}.`;
}

/**
 * JSX/TSX source → a classic script that assigns the module's exports to `__svcTemplate`.
 * Throws ValidationError (400) for syntax errors and for imports outside the allow-list.
 */
export async function compileTemplateJsx(jsx: string): Promise<string> {
  if (jsx.length > MAX_JSX_CHARS) {
    throw new ValidationError(`The JSX is ${jsx.length} characters long; the limit is ${MAX_JSX_CHARS}.`, [
      { field: 'jsx', message: `must be at most ${MAX_JSX_CHARS} characters` },
    ]);
  }
  try {
    // Loaded on first use: only a JSX template needs the compiler (the boot does not, docs/boot.md).
    const { build } = await import('esbuild');
    const result = await build({
      stdin: { contents: jsx, loader: 'tsx', sourcefile: 'template.tsx', resolveDir: '/' },
      bundle: true,
      write: false,
      format: 'iife',
      globalName: SANDBOX_GLOBAL_NAME,
      platform: 'neutral',
      target: 'es2022',
      jsx: 'automatic',
      plugins: [allowListPlugin],
      logLevel: 'silent',
      // verbatimModuleSyntax keeps unused imports, so `import fs from 'fs'` is refused even when unused.
      // An explicit tsconfig also stops esbuild from reading tsconfig files from the daemon's disk.
      tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
      absWorkingDir: '/',
    });
    const output = result.outputFiles[0]?.text;
    if (!output)
      throw new ValidationError('The JSX does not compile: esbuild produced no output.', [
        { field: 'jsx', message: 'does not compile' },
      ]);
    return output;
  } catch (error) {
    if (error instanceof ValidationError) throw error;
    const errors = (error as { errors?: Message[] }).errors;
    if (Array.isArray(errors)) {
      throw new ValidationError(firstSentence(errors), [
        { field: 'jsx', message: 'does not compile or imports a module outside the allow-list' },
      ]);
    }
    throw error;
  }
}
