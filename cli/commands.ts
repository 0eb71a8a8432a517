// Every command of the svc CLI (oclif's explicit command strategy: no directory scanning).
import DaemonStart from './commands/daemon/start.ts';

export const COMMANDS = {
  'daemon:start': DaemonStart,
};
