// TLS reports an operator can drive (docs/mta.md "TLS reporting"): the daily job sends each finished
// UTC day's report once; here a platform admin previews what a day's report for a domain says (and
// where it went), and sends it again (to every rua of the domain, whatever the earlier outcome).
import type { ModuleDeps } from '../../app-types.ts';
import type { AdminContext } from '../../context.ts';
import { ApiError, ConflictError, ServiceUnavailableError, ValidationError } from '../../errors.ts';
import { resolveSystemSender } from '../../mail/system-mail.ts';
import { createDnsClient } from '../../mta/dns-query.ts';
import { reportingAddresses } from '../../mta/tls-report.ts';
import {
  buildTlsReport,
  deliverTlsReport,
  tlsReportSubmitter,
  TLS_REPORT_RETENTION_DAYS,
  type AddressOutcome,
} from '../../mta/tls-report-job.ts';
import { recordTlsReportResend, tlsReportCounts, tlsReportSendState } from '../../mta/sql/tls-report.ts';
import { recordAudit } from '../audit/service.ts';
import type { TlsReportParams, TlsReportPreviewBody, TlsReportSentBody } from '../../../shared/schemas/tls-reports.ts';

type TlsReportDeps = Pick<ModuleDeps, 'db' | 'config' | 'secrets'>;
type Actor = AdminContext & { ip?: string };

/** The (day, domain) asked, checked: a real calendar day, and a domain in the form the counts keep. */
function reportKey(input: TlsReportParams): { day: string; domain: string } {
  const date = new Date(`${input.day}T00:00:00Z`);
  if (Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== input.day)
    throw new ValidationError(`${input.day} is not a day of the calendar (YYYY-MM-DD).`, [
      { field: 'day', message: 'not a calendar day' },
    ]);
  return { day: input.day, domain: input.domain.toLowerCase().replace(/\.$/, '') };
}

async function reportOf(deps: TlsReportDeps, key: { day: string; domain: string }, reportId: string | null) {
  const { sql } = deps.db;
  if ((await tlsReportCounts(sql, key)).length === 0)
    throw new ApiError(
      404,
      'NOT_FOUND',
      `No TLS report for ${key.domain} on ${key.day}: no session to it was counted that UTC day, or the counts are past their ${TLS_REPORT_RETENTION_DAYS} days.`,
    );
  const sender = await resolveSystemSender(deps.db.sequelize, deps.config);
  const submitter = await tlsReportSubmitter(deps.db.sequelize, deps.config, sender);
  return { report: await buildTlsReport(sql, key, submitter, reportId), sender, submitter };
}

export async function previewTlsReport(
  deps: TlsReportDeps,
  _caller: AdminContext,
  input: TlsReportParams,
): Promise<TlsReportPreviewBody> {
  const key = reportKey(input);
  const state = await tlsReportSendState(deps.db.sql, key);
  const { report } = await reportOf(deps, key, state?.reportId ?? null);
  const rua = await reportingAddresses(createDnsClient({ servers: deps.config.dnsServers }), key.domain);
  return {
    ...key,
    report,
    rua: { https: rua.https, mailto: rua.mailto, answered: !rua.unanswered },
    sent:
      state && (state.finishedAt || state.outcomes.length > 0)
        ? { finishedAt: state.finishedAt?.toISOString() ?? null, outcomes: state.outcomes as AddressOutcome[] }
        : null,
  };
}

export async function resendTlsReport(
  deps: TlsReportDeps,
  actor: Actor,
  input: TlsReportParams,
): Promise<TlsReportSentBody> {
  const key = reportKey(input);
  const today = new Date().toISOString().slice(0, 10);
  if (key.day >= today)
    throw new ConflictError(
      `${key.day} (UTC) is not over yet: its report would leave out the rest of the day. Preview it with GET, and send it from tomorrow.`,
      'DAY_NOT_OVER',
    );
  const state = await tlsReportSendState(deps.db.sql, key);
  if (state?.claimed && !state.finishedAt)
    throw new ConflictError(
      `The daily job is sending the report of ${key.domain} for ${key.day} right now; look again in a few minutes.`,
      'REPORT_BEING_SENT',
    );
  const { report, sender, submitter } = await reportOf(deps, key, state?.reportId ?? null);
  const dns = createDnsClient({ servers: deps.config.dnsServers });
  const rua = await reportingAddresses(dns, key.domain);
  if (rua.unanswered)
    throw new ServiceUnavailableError(
      `The look-up of _smtp._tls.${key.domain} did not answer: the report cannot be addressed now. Try again, and check the resolver (svc doctor).`,
      'DNS_UNANSWERED',
    );
  if (rua.https.length + rua.mailto.length === 0)
    throw new ConflictError(
      `${key.domain} publishes no TLS-RPT record with a rua (_smtp._tls.${key.domain}): there is nowhere to send its report.`,
      'NO_TLS_RPT_RECORD',
    );
  const outcomes = await deliverTlsReport(
    { sequelize: deps.db.sequelize, config: deps.config, secrets: deps.secrets },
    { item: key, report, rua, sender, submitter, dns },
  );
  await recordTlsReportResend(deps.db.sql, key, `admin:${actor.adminId}`, report['report-id'], outcomes);
  await recordAudit(deps.db.sequelize, {
    action: 'platform.tls_report_sent',
    adminId: actor.adminId,
    ip: actor.ip,
    target: `${key.domain} ${key.day}`,
    metadata: { outcomes: outcomes.map((outcome) => ({ uri: outcome.uri, ok: outcome.ok })) },
  });
  return { ...key, reportId: report['report-id'], outcomes };
}
