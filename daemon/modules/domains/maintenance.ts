// Daily re-check of verified domains: customers edit DNS after verification, and a removed DKIM key
// or SPF include silently sends mail to spam. Each run checks the domains whose last check is over a
// day old; a record whose state changed is kept as drift on the domain and logged.
import { Op } from 'sequelize';
import type { MaintenanceTask, WorkerContext } from '../../mail/worker-context.ts';
import { modelsOf } from '../models.ts';
import { checkAndStore, type DomainDeps } from './service.ts';

export const REVERIFY_AFTER_MS = 24 * 60 * 60_000;
const RUN_EVERY_MS = 60 * 60_000;
const DOMAINS_PER_RUN = 50;

/** Re-verifies up to DOMAINS_PER_RUN due domains; answers how many were checked and how many drifted. */
export async function reverifyDueDomains(
  deps: DomainDeps,
  log: Pick<WorkerContext['log'], 'warn'>,
  now = new Date(),
): Promise<{ checked: number; drifted: number }> {
  const { Domain } = modelsOf(deps.db.sequelize);
  const cutoff = new Date(now.getTime() - REVERIFY_AFTER_MS);
  const due = await Domain.findAll({
    where: { status: 'verified', [Op.or]: [{ lastCheckedAt: null }, { lastCheckedAt: { [Op.lt]: cutoff } }] },
    order: [['lastCheckedAt', 'ASC']],
    limit: DOMAINS_PER_RUN,
  });
  let checked = 0;
  let drifted = 0;
  for (const domain of due) {
    // Claim the domain so that another node's maintenance thread skips it.
    const [claimed] = await Domain.update(
      { lastCheckedAt: now },
      { where: { id: domain.id, [Op.or]: [{ lastCheckedAt: null }, { lastCheckedAt: { [Op.lt]: cutoff } }] } },
    );
    if (claimed === 0) continue;
    const driftBefore = domain.driftDetectedAt?.getTime() ?? null;
    const { domain: after } = await checkAndStore(deps, domain, { recordDrift: true });
    checked += 1;
    if ((after.driftDetectedAt?.getTime() ?? null) !== driftBefore) {
      drifted += 1;
      log.warn(
        { domainId: after.id, tenantId: after.tenantId, domain: after.name, status: after.status, drift: after.drift },
        'sending domain DNS changed since the last check',
      );
    }
  }
  return { checked, drifted };
}

export const reverifyDomainsTask: MaintenanceTask = {
  name: 'reverify-domains',
  everyMs: RUN_EVERY_MS,
  async run(ctx) {
    await reverifyDueDomains(
      { db: { sequelize: ctx.sequelize }, secrets: ctx.secrets, config: ctx.config, dkimSigning: ctx.dkimSigning },
      ctx.log,
    );
  },
};
