// A mistyped flag: one sentence naming the closest flag of the command (`--too` → `--to`), instead of
// oclif's page of usage. The same edit distance as a mistyped command (suggest.ts).
import { editDistance } from './suggest.ts';

/** The closest of `known` (names without dashes) to `typed` (`--too`), or undefined when none is near. */
export function closestFlag(typed: string, known: readonly string[]): string | undefined {
  const name = typed.replace(/^-+/, '').split('=')[0].toLowerCase();
  let best: { flag: string; score: number } | undefined;
  for (const flag of known) {
    const score = editDistance(name, flag);
    if (!best || score < best.score) best = { flag, score };
  }
  return best && best.score <= Math.max(1, Math.ceil(name.length / 3)) ? best.flag : undefined;
}

/** Each unknown flag with its closest known one: the `details` of the usage error. */
export function unknownFlagDetails(typed: readonly string[], known: readonly string[]) {
  return typed.map((flag) => {
    const near = closestFlag(flag, known);
    return { field: flag, message: near ? `unknown flag (did you mean --${near}?)` : 'unknown flag' };
  });
}

/** "--too (did you mean --to?) is not a flag of svc send. See `svc send --help`." */
export function unknownFlagSentence(command: string, typed: readonly string[], known: readonly string[]): string {
  const parts = typed.map((flag) => {
    const near = closestFlag(flag, known);
    return near ? `${flag} (did you mean --${near}?)` : flag;
  });
  const what = typed.length === 1 ? 'is not a flag' : 'are not flags';
  return `${parts.join(', ')} ${what} of svc ${command}. See \`svc ${command} --help\`.`;
}
