// Every command of the svc CLI (oclif's explicit command strategy: no directory scanning).
import Login from './commands/auth/login.ts';
import Logout from './commands/auth/logout.ts';
import WhoAmI from './commands/auth/whoami.ts';
import Register from './commands/auth/register.ts';
import TwoFactorEnable from './commands/twofa/enable.ts';
import TwoFactorDisable from './commands/twofa/disable.ts';
import TwoFactorStatusCommand from './commands/twofa/status.ts';
import TenantsList from './commands/tenants/list.ts';
import TenantsUse from './commands/tenants/use.ts';
import TenantsCreate from './commands/tenants/create.ts';
import TenantsRetention from './commands/tenants/retention.ts';
import KeysList from './commands/keys/list.ts';
import KeysCreate from './commands/keys/create.ts';
import KeysRotate from './commands/keys/rotate.ts';
import KeysRevoke from './commands/keys/revoke.ts';
import Send from './commands/emails/send.ts';
import LogsList from './commands/logs/list.ts';
import LogsShow from './commands/logs/show.ts';
import LogsTail from './commands/logs/tail.ts';
import DashboardCommand from './commands/dashboard.ts';
import DaemonStart from './commands/daemon/start.ts';
import DaemonStatus from './commands/daemon/status.ts';
import Doctor from './commands/doctor.ts';
import DbMigrate from './commands/db/migrate.ts';
import TemplatesList from './commands/templates/list.ts';
import TemplatesShow from './commands/templates/show.ts';
import TemplatesPush from './commands/templates/push.ts';
import TemplatesPublish from './commands/templates/publish.ts';
import TemplatesPull from './commands/templates/pull.ts';
import TemplatesCheck from './commands/templates/check.ts';
import TemplatesDiff from './commands/templates/diff.ts';
import TemplatesPreview from './commands/templates/preview.ts';
import DomainsAdd from './commands/domains/add.ts';
import DomainsList from './commands/domains/list.ts';
import DomainsDns from './commands/domains/dns.ts';
import DomainsVerify from './commands/domains/verify.ts';
import DomainsDiagnose from './commands/domains/diagnose.ts';
import DomainsDmarc from './commands/domains/dmarc.ts';
import WebhooksList from './commands/webhooks/list.ts';
import WebhooksAdd from './commands/webhooks/add.ts';
import WebhooksDeliveries from './commands/webhooks/deliveries.ts';
import WebhooksReplay from './commands/webhooks/replay.ts';
import SuppressionsList from './commands/suppressions/list.ts';
import SuppressionsAdd from './commands/suppressions/add.ts';
import SuppressionsRemove from './commands/suppressions/remove.ts';
import CampaignsList from './commands/campaigns/list.ts';
import CampaignsShow from './commands/campaigns/show.ts';
import CampaignsSend from './commands/campaigns/send.ts';
import CampaignsCancel from './commands/campaigns/cancel.ts';
import ContactsImport from './commands/contacts/import.ts';

export const COMMANDS = {
  login: Login,
  logout: Logout,
  whoami: WhoAmI,
  register: Register,
  '2fa:enable': TwoFactorEnable,
  '2fa:disable': TwoFactorDisable,
  '2fa:status': TwoFactorStatusCommand,
  'tenants:list': TenantsList,
  'tenants:use': TenantsUse,
  'tenants:create': TenantsCreate,
  'tenants:retention': TenantsRetention,
  'keys:list': KeysList,
  'keys:create': KeysCreate,
  'keys:rotate': KeysRotate,
  'keys:revoke': KeysRevoke,
  send: Send,
  'logs:list': LogsList,
  'logs:show': LogsShow,
  'logs:tail': LogsTail,
  'templates:list': TemplatesList,
  'templates:show': TemplatesShow,
  'templates:push': TemplatesPush,
  'templates:publish': TemplatesPublish,
  'templates:pull': TemplatesPull,
  'templates:check': TemplatesCheck,
  'templates:diff': TemplatesDiff,
  'templates:preview': TemplatesPreview,
  'domains:add': DomainsAdd,
  'domains:list': DomainsList,
  'domains:dns': DomainsDns,
  'domains:verify': DomainsVerify,
  'domains:diagnose': DomainsDiagnose,
  'domains:dmarc': DomainsDmarc,
  'webhooks:list': WebhooksList,
  'webhooks:add': WebhooksAdd,
  'webhooks:deliveries': WebhooksDeliveries,
  'webhooks:replay': WebhooksReplay,
  'suppressions:list': SuppressionsList,
  'suppressions:add': SuppressionsAdd,
  'suppressions:remove': SuppressionsRemove,
  'campaigns:list': CampaignsList,
  'campaigns:show': CampaignsShow,
  'campaigns:send': CampaignsSend,
  'campaigns:cancel': CampaignsCancel,
  'contacts:import': ContactsImport,
  dashboard: DashboardCommand,
  'daemon:start': DaemonStart,
  'daemon:status': DaemonStatus,
  doctor: Doctor,
  'db:migrate': DbMigrate,
};
