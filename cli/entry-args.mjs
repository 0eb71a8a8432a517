// What `svc` runs when no command is named: the dashboard for a person at a terminal, the help
// otherwise (pipes, CI). Global flags alone (`svc --profile direct`) name no command either: they are
// the dashboard's (in a terminal). Plain JavaScript: bin/svc.js reads it before the CLI's build.

/** Flags every command takes, and whether each takes a value. */
const GLOBAL_FLAGS = { '--profile': true, '--ca': true, '--insecure': false };

/** True when argv is nothing but global flags (and their values). */
export function onlyGlobalFlags(argv) {
  for (let i = 0; i < argv.length; i++) {
    const [name, inline] = argv[i].split(/=(.*)/s);
    if (!(name in GLOBAL_FLAGS)) return false;
    if (GLOBAL_FLAGS[name] && inline === undefined) {
      if (i + 1 >= argv.length) return false;
      i++;
    }
  }
  return true;
}

/** The arguments oclif runs, or undefined to let it run argv as given. */
export function entryArgs(argv, interactive) {
  if (!onlyGlobalFlags(argv)) return undefined;
  return interactive ? ['dashboard', ...argv] : argv.length ? ['--help'] : undefined;
}
