// An unknown command: name the closest one, written the way people type it (spaces, not oclif's colons),
// and answer --json callers with the contract error object. Exit 2 (usage), like any bad flag.
import type { Hook } from '@oclif/core';
import { EXIT, type ContractError } from '../errors.ts';
import { closestCommand } from '../suggest.ts';
import { closestFlag } from '../flag-suggest.ts';
import { asInvoked } from '../invocation.ts';

const hook: Hook<'command_not_found'> = async function (options) {
  const commands = options.config.commands.filter((command) => !command.hidden);
  const words = options.id.split(':');
  let typed = words.join(' ');
  let shown: string | undefined;
  let message: string;
  if (words[0].startsWith('-')) {
    // A flag where a command goes (`svc --too`): name the commands that have the closest flag.
    const flagged = commands.map((command) => ({ id: command.id, flags: Object.keys(command.flags ?? {}) }));
    const near = closestFlag(words[0], [...new Set(flagged.flatMap((command) => command.flags))]);
    const owners = near
      ? flagged.filter((command) => command.flags.includes(near)).map((c) => c.id.split(':').join(' '))
      : [];
    shown = near ? `--${near}` : undefined;
    const where = owners.length > 3 ? `${owners.slice(0, 3).join(', ')}, …` : owners.join(', ');
    message =
      `"${words[0]}" is not a svc command: flags go after a command.` +
      (near ? ` Did you mean --${near} (a flag of ${where})?` : '') +
      ' See `svc --help`.';
  } else {
    // The words after the command are its arguments (`svc templates pusj welcome.html`): the command is
    // the longest run of words nearest to one.
    let suggestion: string | undefined;
    for (let count = words.length; count > 0 && !suggestion; count--) {
      suggestion = closestCommand(
        words.slice(0, count).join(':'),
        commands.map((command) => command.id),
      );
      if (suggestion || count === 1) typed = words.slice(0, count).join(' ');
    }
    shown = suggestion ? suggestion.split(':').join(' ') : undefined;
    message = `"${typed}" is not a svc command.${shown ? ` Did you mean \`svc ${shown}\`?` : ''} See \`svc --help\`.`;
  }
  message = asInvoked(message);
  process.exitCode = EXIT.usage;
  if ((options.argv ?? []).includes('--json')) {
    const body: ContractError = {
      error: {
        code: 'COMMAND_NOT_FOUND',
        message,
        details: shown ? [{ field: 'command', message: `did you mean "${shown}"?` }] : [],
        exitCode: EXIT.usage,
      },
    };
    process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
  } else {
    process.stderr.write(`${message}\n`);
  }
};

export default hook;
