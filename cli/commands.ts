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
import Status from './commands/status.ts';
import DaemonStart from './commands/daemon/start.ts';
import DaemonStatus from './commands/daemon/status.ts';
import Doctor from './commands/doctor.ts';
import Pools from './commands/pools/index.ts';
import PoolsCreate from './commands/pools/create.ts';
import PoolsAddAddress from './commands/pools/add-address.ts';
import PoolsSetAddress from './commands/pools/set-address.ts';
import PoolsRemoveAddress from './commands/pools/remove-address.ts';
import PoolsAssign from './commands/pools/assign.ts';
import PoolsSchedule from './commands/pools/schedule.ts';
import PoolsRename from './commands/pools/rename.ts';
import PoolsDelete from './commands/pools/delete.ts';
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
import StatsDeliverability from './commands/stats/deliverability.ts';
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
import Api from './commands/api.ts';
import MembersList from './commands/members/list.ts';
import MembersInvite from './commands/members/invite.ts';
import MembersRole from './commands/members/role.ts';
import MembersRemove from './commands/members/remove.ts';
import TenantsRename from './commands/tenants/rename.ts';
import TenantsPlan from './commands/tenants/plan.ts';
import TenantsDelete from './commands/tenants/delete.ts';
import TenantsBlock from './commands/tenants/block.ts';
import TenantsUnblock from './commands/tenants/unblock.ts';
import TenantsResumeSending from './commands/tenants/resume-sending.ts';
import TenantsAudit from './commands/tenants/audit.ts';
import TenantsThrottle from './commands/tenants/throttle.ts';
import ProvidersList from './commands/providers/list.ts';
import ProvidersSet from './commands/providers/set.ts';
import ProvidersAdd from './commands/providers/add.ts';
import ProvidersLift from './commands/providers/lift.ts';
import ProvidersRulesAdd from './commands/providers/rules/add.ts';
import ProvidersRulesSet from './commands/providers/rules/set.ts';
import ProvidersRulesRemove from './commands/providers/rules/remove.ts';
import TlsReportsShow from './commands/tls-reports/show.ts';
import TlsReportsSend from './commands/tls-reports/send.ts';
import PlatformSettingsShow from './commands/platform/settings/show.ts';
import PlatformSettingsSet from './commands/platform/settings/set.ts';
import PasswordChange from './commands/password/change.ts';
import PasswordForgot from './commands/password/forgot.ts';
import PasswordReset from './commands/password/reset.ts';
import VerifyEmail from './commands/auth/verify-email.ts';
import WebhooksToggle from './commands/webhooks/toggle.ts';
import WebhooksRemove from './commands/webhooks/remove.ts';
import WebhooksTest from './commands/webhooks/test.ts';
import DomainsRemove from './commands/domains/remove.ts';
import ScheduledList from './commands/scheduled/list.ts';
import ScheduledCancel from './commands/scheduled/cancel.ts';
import LogsResend from './commands/logs/resend.ts';
import InboundRoutesList from './commands/inbound/routes/list.ts';
import InboundRoutesShow from './commands/inbound/routes/show.ts';
import InboundRoutesAdd from './commands/inbound/routes/add.ts';
import InboundRoutesEdit from './commands/inbound/routes/edit.ts';
import InboundRoutesRemove from './commands/inbound/routes/remove.ts';
import InboundShow from './commands/inbound/show.ts';
import InboundReplay from './commands/inbound/replay.ts';
import InboundMessages from './commands/inbound/messages.ts';
import InboundAddress from './commands/inbound/address.ts';
import InboundTail from './commands/inbound/tail.ts';
import InboundStatsCommand from './commands/inbound/stats.ts';
import InboundDomainsList from './commands/inbound/domains/list.ts';
import InboundDomainsShow from './commands/inbound/domains/show.ts';
import InboundDomainsAdd from './commands/inbound/domains/add.ts';
import InboundDomainsVerify from './commands/inbound/domains/verify.ts';
import InboundDomainsRemove from './commands/inbound/domains/remove.ts';
import ProjectsList from './commands/projects/list.ts';
import ProjectsShow from './commands/projects/show.ts';
import ProjectsCreate from './commands/projects/create.ts';
import ProjectsUpdate from './commands/projects/update.ts';
import ProjectsDelete from './commands/projects/delete.ts';
import ProjectsVerifySmtp from './commands/projects/verify-smtp.ts';
import ContactsList from './commands/contacts/list.ts';
import ContactsShow from './commands/contacts/show.ts';
import ContactsUpsert from './commands/contacts/upsert.ts';
import ContactsPatch from './commands/contacts/patch.ts';
import ContactsErase from './commands/contacts/erase.ts';
import ContactsTag from './commands/contacts/tag.ts';
import ContactTagsList from './commands/contacts/tags/list.ts';
import ContactTagsCreate from './commands/contacts/tags/create.ts';
import ContactTagsUpdate from './commands/contacts/tags/update.ts';
import ContactTagsDelete from './commands/contacts/tags/delete.ts';
import BillingPlans from './commands/billing/plans.ts';
import BillingSetPlan from './commands/billing/set-plan.ts';
import BillingSubscription from './commands/billing/subscription.ts';
import BillingCheckout from './commands/billing/checkout.ts';
import BillingPortal from './commands/billing/portal.ts';
import TemplatesUpdate from './commands/templates/update.ts';
import TemplatesDelete from './commands/templates/delete.ts';
import TemplatesDuplicate from './commands/templates/duplicate.ts';
import TemplatesUnpublish from './commands/templates/unpublish.ts';
import TemplatesTag from './commands/templates/tag.ts';
import TemplateTagsList from './commands/templates/tags/list.ts';
import TemplateTagsCreate from './commands/templates/tags/create.ts';
import TemplateTagsDelete from './commands/templates/tags/delete.ts';
import CampaignsCreate from './commands/campaigns/create.ts';
import CampaignsCoverage from './commands/campaigns/coverage.ts';
import SendBatch from './commands/emails/send-batch.ts';
import ContactsBulk from './commands/contacts/bulk.ts';
import PlatformMail from './commands/platform/mail.ts';
import PlatformDeliverability from './commands/platform/deliverability.ts';
import PlatformReports from './commands/platform/reports.ts';
import QueueList from './commands/queue/list.ts';
import QueueRetry from './commands/queue/retry.ts';
import QueueHold from './commands/queue/hold.ts';
import QueueRelease from './commands/queue/release.ts';

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
  'stats:deliverability': StatsDeliverability,
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
  status: Status,
  'daemon:start': DaemonStart,
  'daemon:status': DaemonStatus,
  doctor: Doctor,
  pools: Pools,
  'pools:create': PoolsCreate,
  'pools:add-address': PoolsAddAddress,
  'pools:set-address': PoolsSetAddress,
  'pools:remove-address': PoolsRemoveAddress,
  'pools:assign': PoolsAssign,
  'pools:schedule': PoolsSchedule,
  'pools:rename': PoolsRename,
  'pools:delete': PoolsDelete,
  'db:migrate': DbMigrate,
  api: Api,
  'members:list': MembersList,
  'members:invite': MembersInvite,
  'members:role': MembersRole,
  'members:remove': MembersRemove,
  'tenants:rename': TenantsRename,
  'tenants:plan': TenantsPlan,
  'tenants:delete': TenantsDelete,
  'tenants:block': TenantsBlock,
  'tenants:unblock': TenantsUnblock,
  'tenants:resume-sending': TenantsResumeSending,
  'tenants:audit': TenantsAudit,
  'tenants:throttle': TenantsThrottle,
  providers: ProvidersList,
  'providers:set': ProvidersSet,
  'providers:add': ProvidersAdd,
  'providers:lift': ProvidersLift,
  'providers:rules:add': ProvidersRulesAdd,
  'providers:rules:set': ProvidersRulesSet,
  'providers:rules:remove': ProvidersRulesRemove,
  'tls-reports:show': TlsReportsShow,
  'tls-reports:send': TlsReportsSend,
  'platform:settings:show': PlatformSettingsShow,
  'platform:settings:set': PlatformSettingsSet,
  'password:change': PasswordChange,
  'password:forgot': PasswordForgot,
  'password:reset': PasswordReset,
  'verify-email': VerifyEmail,
  'webhooks:toggle': WebhooksToggle,
  'webhooks:remove': WebhooksRemove,
  'webhooks:test': WebhooksTest,
  'domains:remove': DomainsRemove,
  'scheduled:list': ScheduledList,
  'scheduled:cancel': ScheduledCancel,
  'logs:resend': LogsResend,
  'projects:list': ProjectsList,
  'projects:show': ProjectsShow,
  'projects:create': ProjectsCreate,
  'projects:update': ProjectsUpdate,
  'projects:delete': ProjectsDelete,
  'projects:verify-smtp': ProjectsVerifySmtp,
  'contacts:list': ContactsList,
  'contacts:show': ContactsShow,
  'contacts:upsert': ContactsUpsert,
  'contacts:patch': ContactsPatch,
  'contacts:erase': ContactsErase,
  'contacts:tag': ContactsTag,
  'contacts:tags:list': ContactTagsList,
  'contacts:tags:create': ContactTagsCreate,
  'contacts:tags:update': ContactTagsUpdate,
  'contacts:tags:delete': ContactTagsDelete,
  'billing:plans': BillingPlans,
  'billing:set-plan': BillingSetPlan,
  'billing:subscription': BillingSubscription,
  'billing:checkout': BillingCheckout,
  'billing:portal': BillingPortal,
  'templates:update': TemplatesUpdate,
  'templates:delete': TemplatesDelete,
  'templates:duplicate': TemplatesDuplicate,
  'templates:unpublish': TemplatesUnpublish,
  'templates:tag': TemplatesTag,
  'templates:tags:list': TemplateTagsList,
  'templates:tags:create': TemplateTagsCreate,
  'templates:tags:delete': TemplateTagsDelete,
  'campaigns:create': CampaignsCreate,
  'campaigns:coverage': CampaignsCoverage,
  'send-batch': SendBatch,
  'contacts:bulk': ContactsBulk,
  'platform:mail': PlatformMail,
  'platform:reports': PlatformReports,
  'platform:deliverability': PlatformDeliverability,
  queue: QueueList,
  'queue:retry': QueueRetry,
  'queue:hold': QueueHold,
  'queue:release': QueueRelease,
  'inbound:domains:add': InboundDomainsAdd,
  'inbound:domains:list': InboundDomainsList,
  'inbound:domains:show': InboundDomainsShow,
  'inbound:domains:verify': InboundDomainsVerify,
  'inbound:domains:remove': InboundDomainsRemove,
  'inbound:routes:add': InboundRoutesAdd,
  'inbound:routes:list': InboundRoutesList,
  'inbound:routes:show': InboundRoutesShow,
  'inbound:routes:edit': InboundRoutesEdit,
  'inbound:routes:remove': InboundRoutesRemove,
  'inbound:show': InboundShow,
  'inbound:replay': InboundReplay,
  'inbound:messages': InboundMessages,
  'inbound:address': InboundAddress,
  'inbound:tail': InboundTail,
  'inbound:stats': InboundStatsCommand,
};
