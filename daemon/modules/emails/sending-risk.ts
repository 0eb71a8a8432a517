// Sending risk: a warning, then a pause, each only on evidence. One complaint (forged, or one real
// spam click) must not stop a tenant's password resets, so a rate is judged only over a representative
// volume (riskMinSends sends in the window) and counts each recipient once (recipient_outcomes: a
// replayed report adds nothing). Levels are platform settings (shared/schemas/platform.ts), anchored on
// the mailbox providers' rules: Gmail and Yahoo ask for under 0.1 % spam and never 0.3 %; SES reviews
// an account at 5 % bounces and stops it at 10 %.
//
// Warning: rate ≥ the warn level → tenants.sending_at_risk_*, event and webhook
// `tenant.sending_at_risk`, a mail to the owners (once, until the rates fall back below the levels).
// Pause: rate ≥ the pause level AND at least riskMinComplaints complaints (riskMinHardBounces hard
// bounces) from distinct recipients. The reasons carry the numbers behind the decision.
import { QueryTypes, type Transaction } from 'sequelize';
import { sendSystemMail, type SystemMailDeps } from '../../mail/system-mail.ts';
import { getPlatformSettings } from '../../db/platform-settings.ts';
import { sequelizeRows } from '../../db/sql.ts';
import { SENDING_RISK_STATS } from './sql/sending-risk.ts';
import { emitEvent } from '../webhooks/events.ts';
import type { PlatformSettings } from '../../../shared/schemas/platform.ts';

/** The window: a tenant's newest live sends, at most this many… */
export const RISK_WINDOW_SENDS = 10_000;
/** …and none older than this (a month of mail at most: old mistakes fade). */
export const RISK_WINDOW_DAYS = 30;

export interface SendingRiskStats {
  sends: number;
  /** Distinct recipients who complained about a send in the window. */
  complaints: number;
  /** Distinct recipients whose address hard-bounced for a send in the window. */
  hardBounces: number;
}

export type RiskLevels = Pick<
  PlatformSettings,
  | 'complaintRateWarn'
  | 'complaintRatePause'
  | 'hardBounceRateWarn'
  | 'hardBounceRatePause'
  | 'riskMinSends'
  | 'riskMinComplaints'
  | 'riskMinHardBounces'
>;

export interface RiskJudgement {
  level: 'ok' | 'warn' | 'pause';
  /** What passed which level, with the numbers; null when ok. */
  reason: string | null;
}

const percent = (rate: number) => `${(rate * 100).toFixed(2).replace(/\.?0+$/, '')} %`;

function measure(
  what: 'complaint' | 'hard-bounce',
  count: number,
  sends: number,
  warn: number,
  pause: number,
  minCount: number,
) {
  const rate = count / sends;
  const numbers = `${what} rate ${percent(rate)} (${count} ${what === 'complaint' ? 'complaints' : 'hard bounces'} from distinct recipients over the last ${sends} sends)`;
  if (rate >= pause && count >= minCount)
    return { level: 'pause' as const, reason: `${numbers} is at or above the ${percent(pause)} pause level` };
  if (rate >= warn && count > 0)
    return { level: 'warn' as const, reason: `${numbers} is at or above the ${percent(warn)} warning level` };
  return { level: 'ok' as const, reason: null };
}

/**
 * The decision, pure. Below riskMinSends nothing is judged: one complaint in 30 sends is 3 %, and
 * says nothing. The distinct-recipient minimums gate the pause; a warning changes nothing for the
 * tenant's mail, so the rate over the volume is enough for it (2 complaints in 1,500 sends warn).
 */
export function judgeSendingRisk(stats: SendingRiskStats, levels: RiskLevels): RiskJudgement {
  if (stats.sends < levels.riskMinSends || stats.sends === 0) return { level: 'ok', reason: null };
  const judged = [
    measure(
      'complaint',
      stats.complaints,
      stats.sends,
      levels.complaintRateWarn,
      levels.complaintRatePause,
      levels.riskMinComplaints,
    ),
    measure(
      'hard-bounce',
      stats.hardBounces,
      stats.sends,
      levels.hardBounceRateWarn,
      levels.hardBounceRatePause,
      levels.riskMinHardBounces,
    ),
  ];
  return (
    judged.find((j) => j.level === 'pause') ?? judged.find((j) => j.level === 'warn') ?? { level: 'ok', reason: null }
  );
}

/** The tenant's window and its distinct complained and hard-bounced recipients. */
export async function sendingRiskStats(
  deps: Pick<SystemMailDeps, 'sequelize'>,
  tenantId: string,
  transaction?: Transaction,
): Promise<SendingRiskStats> {
  const [row] = await sequelizeRows<SendingRiskStats>(
    deps.sequelize,
    SENDING_RISK_STATS,
    [tenantId, RISK_WINDOW_DAYS, RISK_WINDOW_SENDS],
    transaction,
  );
  return row ?? { sends: 0, complaints: 0, hardBounces: 0 };
}

/**
 * Judges the tenant after a hard bounce or complaint and acts on a change: pauses (the reason stays
 * until an owner lifts it), warns once (event, webhook, mail to the owners), or clears a warning the
 * rates no longer support. Runs in the outcome's transaction, so the warning commits with its cause.
 */
export async function evaluateSendingRisk(
  deps: SystemMailDeps,
  tenantId: string,
  transaction?: Transaction,
): Promise<RiskJudgement & { stats: SendingRiskStats }> {
  const { sequelize } = deps;
  const stats = await sendingRiskStats(deps, tenantId, transaction);
  const judgement = judgeSendingRisk(stats, await getPlatformSettings(sequelize, transaction));
  if (judgement.level === 'pause') {
    await sequelize.query(
      `UPDATE tenants SET sending_paused_at = now(), sending_paused_reason = :reason, updated_at = now()
        WHERE id = :tenantId AND sending_paused_at IS NULL`,
      { replacements: { tenantId, reason: judgement.reason }, transaction },
    );
  }
  if (judgement.level === 'ok') {
    await sequelize.query(
      `UPDATE tenants SET sending_at_risk_at = NULL, sending_at_risk_reason = NULL, updated_at = now()
        WHERE id = :tenantId AND sending_at_risk_at IS NOT NULL`,
      { replacements: { tenantId }, transaction },
    );
    return { ...judgement, stats };
  }
  // A pause is also a warning: the status shows the numbers, and owners hear of it once.
  const warned = await sequelize.query<{ name: string }>(
    `UPDATE tenants SET sending_at_risk_at = now(), sending_at_risk_reason = :reason, updated_at = now()
      WHERE id = :tenantId AND sending_at_risk_at IS NULL RETURNING name`,
    { replacements: { tenantId, reason: judgement.reason }, type: QueryTypes.SELECT, transaction },
  );
  if (warned.length === 0) {
    await sequelize.query(
      `UPDATE tenants SET sending_at_risk_reason = :reason WHERE id = :tenantId AND sending_at_risk_reason IS DISTINCT FROM :reason`,
      { replacements: { tenantId, reason: judgement.reason }, transaction },
    );
    return { ...judgement, stats };
  }
  const data = { level: judgement.level, reason: judgement.reason, ...stats };
  const emit = (tx: Transaction) => emitEvent(sequelize, { tenantId, type: 'tenant.sending_at_risk', data }, tx);
  if (transaction) await emit(transaction);
  else await sequelize.transaction(emit);
  await mailOwners(deps, tenantId, warned[0].name, judgement, transaction);
  return { ...judgement, stats };
}

async function mailOwners(
  deps: SystemMailDeps,
  tenantId: string,
  tenantName: string,
  judgement: RiskJudgement,
  transaction?: Transaction,
): Promise<void> {
  const owners = await deps.sequelize.query<{ email: string }>(
    `SELECT a.email FROM memberships m JOIN admins a ON a.id = m.admin_id WHERE m.tenant_id = :tenantId AND m.role = 'owner'`,
    { replacements: { tenantId }, type: QueryTypes.SELECT, transaction },
  );
  const paused = judgement.level === 'pause';
  const text = [
    paused
      ? `Sending for ${tenantName} is paused: the ${judgement.reason}.`
      : `Sending for ${tenantName} is at risk: the ${judgement.reason}. If it reaches the pause level, sending stops.`,
    '',
    'Look at the complaints and hard bounces (svc logs list --status COMPLAINED, svc suppressions list), remove',
    'addresses that did not ask for your mail, and check that your sign-up forms confirm addresses.',
    paused ? 'Then an owner can lift the pause (POST /tenants/{id}/resume-sending).' : '',
  ].join('\n');
  const html = text
    .split('\n\n')
    .map((paragraph) => `<p>${escapeHtml(paragraph)}</p>`)
    .join('');
  for (const owner of owners) {
    await sendSystemMail(
      deps,
      { to: owner.email, subject: `${paused ? 'Sending paused' : 'Sending at risk'}: ${tenantName}`, text, html },
      transaction,
    );
  }
}

/** The mail's HTML is its text in paragraphs; the tenant's name is the only input in it. */
function escapeHtml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
