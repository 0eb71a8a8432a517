// Doctor check: every IP pool address can be bound on this node (issue 48 §5). Pool addresses are
// stored once for all nodes, and each worker node that delivers directly sends from them: an address
// missing from this host's interfaces fails every connection with EADDRNOTAVAIL (the MTA loop then skips
// it, jobs/mta-loop.ts). Run `svc doctor --local` on each worker node to check that node; GET
// /platform/doctor checks the node that answers.
import { QueryTypes } from 'sequelize';
import { hostname } from 'node:os';
import { bindProblem } from '../../mta/bindable-address.ts';
import type { DoctorCheck } from '../../../shared/schemas/doctor.ts';
import type { DoctorDeps } from './service.ts';

const NAME = 'pool-bind';

export async function checkPoolAddressesBindable({ sequelize, config }: DoctorDeps): Promise<DoctorCheck> {
  if (config.delivery !== 'direct' || (config.role !== 'worker' && config.role !== 'all'))
    return {
      name: NAME,
      ok: true,
      message: `Not checked on ${hostname()}: this node does not deliver directly (ROLE=${config.role}, DELIVERY=${config.delivery}), so it binds no pool address.`,
    };
  const rows = await sequelize.query<{ ip: string; pool: string }>(
    `SELECT a.ip, p.name AS pool FROM ip_pool_addresses a JOIN ip_pools p ON p.id = a.pool_id ORDER BY p.name, a.ip`,
    { type: QueryTypes.SELECT },
  );
  if (rows.length === 0) return { name: NAME, ok: true, message: 'No IP pool addresses to bind.' };
  const problems = (await Promise.all(rows.map(async (row) => ({ row, problem: await bindProblem(row.ip) })))).filter(
    (result) => result.problem !== null,
  );
  if (problems.length > 0)
    return {
      name: NAME,
      ok: false,
      message: `${problems.length} of ${rows.length} pool address(es) cannot be bound on this node: ${problems.map(({ row, problem }) => `${problem} (pool ${row.pool})`).join('; ')}. Mail this node sends from them is moved to the pool's other addresses, or deferred when none is left.`,
      fix: 'Add each address to a network interface of this node (ip address add <ip> dev <interface>), or remove it from its pool (svc pools remove-address <pool> <ip>); run svc doctor --local on every worker node.',
    };
  return {
    name: NAME,
    ok: true,
    message: `All ${rows.length} pool address(es) can be bound on ${hostname()}.`,
  };
}
