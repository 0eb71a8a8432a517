// Every command of the svc CLI (oclif's explicit command strategy: no directory scanning).
import Login from './commands/auth/login.ts';
import Logout from './commands/auth/logout.ts';
import WhoAmI from './commands/auth/whoami.ts';
import Register from './commands/auth/register.ts';
import TenantsList from './commands/tenants/list.ts';
import TenantsUse from './commands/tenants/use.ts';
import TenantsCreate from './commands/tenants/create.ts';
import KeysList from './commands/keys/list.ts';
import KeysCreate from './commands/keys/create.ts';
import KeysRotate from './commands/keys/rotate.ts';
import KeysRevoke from './commands/keys/revoke.ts';
import Send from './commands/emails/send.ts';
import LogsList from './commands/logs/list.ts';
import LogsShow from './commands/logs/show.ts';
import LogsTail from './commands/logs/tail.ts';
import DaemonStart from './commands/daemon/start.ts';

export const COMMANDS = {
  login: Login,
  logout: Logout,
  whoami: WhoAmI,
  register: Register,
  'tenants:list': TenantsList,
  'tenants:use': TenantsUse,
  'tenants:create': TenantsCreate,
  'keys:list': KeysList,
  'keys:create': KeysCreate,
  'keys:rotate': KeysRotate,
  'keys:revoke': KeysRevoke,
  send: Send,
  'logs:list': LogsList,
  'logs:show': LogsShow,
  'logs:tail': LogsTail,
  'daemon:start': DaemonStart,
};
