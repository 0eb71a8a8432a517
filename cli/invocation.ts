// How the person ran svc, so that a next step the CLI prints can be pasted as it is: `svc` when that
// is what they typed (installed or linked on PATH), `node bin/svc.js` (relative to where they stand)
// when they ran the script from a clone, where `svc` is "command not found". `npx svc` is no way
// in from a clone: npx would fetch another package named svc from the registry.
import { basename, isAbsolute, relative } from 'node:path';

export function svcInvocation(argv: readonly string[] = process.argv, cwd = process.cwd()): string {
  const script = argv[1];
  if (!script || basename(script) !== 'svc.js') return 'svc';
  const path = relative(cwd, script);
  const shown = path === '' || path.startsWith('..') || isAbsolute(path) ? script : path;
  return `node ${/\s/.test(shown) ? `'${shown}'` : shown}`;
}

/** A sentence's `svc …` commands (in backticks) as the person can run them. */
export function asInvoked(text: string, invocation = svcInvocation()): string {
  return invocation === 'svc' ? text : text.replace(/`svc /g, `\`${invocation} `);
}
