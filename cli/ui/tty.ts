// Ink screens and prompts need a person at a terminal; pipelines get flags and sentences instead.
import { CliFailure, EXIT } from '../errors.ts';

export function isInteractive(): boolean {
  return Boolean(process.stdin.isTTY && process.stdout.isTTY);
}

export function assertInteractive(what: string, instead: string): void {
  if (!isInteractive()) {
    throw new CliFailure(
      `${what} needs a terminal (stdin and stdout are not a TTY): ${instead}`,
      EXIT.usage,
      'NOT_A_TERMINAL',
    );
  }
}
