// An unknown command: name the closest one, written the way people type it (spaces, not oclif's colons),
// and answer --json callers with the contract error object. Exit 2 (usage), like any bad flag.
import type { Hook } from '@oclif/core';
import { EXIT, type ContractError } from '../errors.ts';
import { closestCommand } from '../suggest.ts';

const hook: Hook<'command_not_found'> = async function (options) {
  const typed = options.id.split(':').join(' ');
  const ids = options.config.commands.filter((command) => !command.hidden).map((command) => command.id);
  const suggestion = closestCommand(options.id, ids);
  const shown = suggestion ? suggestion.split(':').join(' ') : undefined;
  const message = `"${typed}" is not a svc command.${shown ? ` Did you mean \`svc ${shown}\`?` : ''} See \`svc --help\`.`;
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
