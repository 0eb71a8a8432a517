// What the CLI says about a tenant's sending: paused (with the reason and its numbers), at risk (the
// warning given before a pause), or nothing. The dashboard and `svc tenants list` show the same words.
import type { TenantSummary } from '../api-types.ts';

export interface SendingState {
  level: 'paused' | 'at-risk';
  /** One line, e.g. "sending paused: complaint rate 0.33 % (…) is at or above the 0.3 % pause level". */
  message: string;
}

export function sendingStateOf(
  tenant: Pick<TenantSummary, 'sendingPausedAt' | 'sendingPausedReason' | 'sendingAtRiskAt' | 'sendingAtRiskReason'>,
): SendingState | null {
  if (tenant.sendingPausedAt)
    return { level: 'paused', message: `sending paused: ${tenant.sendingPausedReason ?? 'by an operator'}` };
  if (tenant.sendingAtRiskAt)
    return {
      level: 'at-risk',
      message: `sending at risk: ${tenant.sendingAtRiskReason ?? 'rates near the pause level'}`,
    };
  return null;
}
