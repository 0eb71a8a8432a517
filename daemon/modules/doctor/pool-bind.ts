// Doctor check: every IP pool address can be bound on this node (issue 48 §5). Pool addresses are
// stored once for all nodes, and each worker node that delivers directly sends from them: an address
// missing from this host's interfaces fails every connection with EADDRNOTAVAIL (the MTA loop then skips
// it, mta/attempt.ts). Run `svc doctor --local` on each worker node to check that node; GET
// /platform/doctor checks the node that answers.
import { hostname } from 'node:os';
import type { Sequelize } from 'sequelize';
import type { Config } from '../../config.ts';
import { bindProblem } from '../../mta/bindable-address.ts';
import { selectPoolIps } from '../ip-pools/sql.ts';
import type { DoctorCheck } from '../../../shared/schemas/doctor.ts';

const NAME = 'pool-bind';

export async function checkPoolAddressesBindable({
  sequelize,
  config,
}: {
  sequelize: Sequelize;
  config: Pick<Config, 'delivery' | 'role'>;
}): Promise<DoctorCheck> {
  if (config.delivery !== 'direct' || (config.role !== 'worker' && config.role !== 'all'))
    return {
      name: NAME,
      ok: true,
      message: `Not checked on ${hostname()}: this node does not deliver directly (ROLE=${config.role}, DELIVERY=${config.delivery}), so it binds no pool address.`,
    };
  const ips = await selectPoolIps(sequelize);
  if (ips.length === 0) return { name: NAME, ok: true, message: 'No IP pool addresses to bind.' };
  const problems = (await Promise.all(ips.map(bindProblem))).filter((problem) => problem !== null);
  if (problems.length > 0)
    return {
      name: NAME,
      ok: false,
      message: `${problems.length} of ${ips.length} pool address(es) cannot be bound on this node: ${problems.join('; ')}. Mail this node sends from them is moved to the pool's other addresses, or deferred when none is left.`,
      fix: 'Add each address to a network interface of this node (ip address add <ip> dev <interface>), or remove it from its pool (svc pools remove-address <pool> <ip>); run svc doctor --local on every worker node.',
    };
  return {
    name: NAME,
    ok: true,
    message: `All ${ips.length} pool address(es) can be bound on ${hostname()}.`,
  };
}
