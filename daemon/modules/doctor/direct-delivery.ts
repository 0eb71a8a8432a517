// With DELIVERY=direct this node is its own MTA: the doctor checks what receivers look at before they
// take its mail, one line each with its fix. The addresses checked are this node's own: OUTBOUND_ADDRESS,
// else the address the port-25 probe left from (the system's choice, as the MTA's sessions get it).
import { hostname } from 'node:os';
import type { Sequelize } from 'sequelize';
import { selectPoolIps } from '../ip-pools/sql.ts';
import type { Config } from '../../config.ts';
import { isFullyQualifiedName, privateAddressKind } from '../../ehlo-name.ts';
import { createDnsClient, recordData } from '../../mta/dns-query.ts';
import { checkEhloName } from '../../mta/ehlo-check.ts';
import { checkReverseDns, reverseName } from '../../mta/reverse-dns.ts';
import { checkDnssec, checkPort25, checkResolver } from './network-checks.ts';
import { checkPlatformRecords, checkSpf, recordsLookup } from './dns-records-checks.ts';
import type { DoctorCheck, DoctorNode } from '../../../shared/schemas/doctor.ts';

export interface DirectDeliveryDeps {
  config: Config;
  sequelize: Sequelize;
}

/** The node a report speaks for: `svc doctor` names it, since each node checks its own addresses. */
export function doctorNode(config: Pick<Config, 'role' | 'delivery'>): DoctorNode {
  return { hostname: hostname(), role: config.role, delivery: config.delivery };
}

/** The relay line under DELIVERY=direct: SMTP_URL is not what carries mail. */
export function relayUnderDirectDelivery(config: Pick<Config, 'smtpUrl'>): DoctorCheck {
  return {
    name: 'relay',
    ok: true,
    message: `DELIVERY=direct: this node delivers to the recipients' MX hosts itself (checked below)${config.smtpUrl ? '; SMTP_URL is set and not used' : ''}.`,
  };
}

async function reverseDnsCheck(
  dns: ReturnType<typeof createDnsClient>,
  sources: string[],
  ehloName: string,
): Promise<DoctorCheck> {
  if (sources.length === 0)
    return {
      name: 'reverse-dns',
      ok: false,
      message: 'Not checked: the outbound address is not known (port 25 did not open and OUTBOUND_ADDRESS is not set).',
      fix: 'Set OUTBOUND_ADDRESS to the public address mail leaves from, or fix port 25 first.',
    };
  if (!isFullyQualifiedName(ehloName)) {
    // No PTR can name an address literal: say what the PTR is today, and that a name comes first.
    const found = await Promise.all(sources.map(async (ip) => `${ip}: ${await ptrOf(dns, ip)}`));
    return {
      name: 'reverse-dns',
      ok: false,
      message: `No forward-confirmed reverse DNS: the EHLO name ${ehloName} is not a name a PTR record can give (${found.join('; ')}). Gmail and Microsoft refuse mail from an address without it.`,
      fix: `Choose a name (e.g. mail.example.com), set EHLO_NAME to it, publish its A/AAAA record pointing at ${sources.join(', ')}, and ask the owner of ${sources.join(', ')} (the hosting provider's panel, "reverse DNS") to set the PTR to that name.`,
    };
  }
  const results = await Promise.all(sources.map((ip) => checkReverseDns(dns, ip, ehloName)));
  const failed = results.filter((result) => !result.ok);
  if (failed.length > 0)
    return {
      name: 'reverse-dns',
      ok: false,
      message: `No forward-confirmed reverse DNS: ${failed.map((result) => result.message).join('; ')}. Gmail and Microsoft refuse mail from an address without it.`,
      fix: `Ask the owner of ${sources.join(', ')} (the hosting provider's panel, "reverse DNS") to set its PTR to ${ehloName}, and publish an A/AAAA record of ${ehloName} pointing back at it.`,
    };
  const found = `Forward-confirmed reverse DNS: ${results.map((result) => result.message).join(', ')}.`;
  const privates = sources.filter((ip) => privateAddressKind(ip) !== null);
  if (privates.length > 0)
    return {
      name: 'reverse-dns',
      ok: true,
      message: `${found} Warning: ${privates.map((ip) => `${ip} is ${privateAddressKind(ip)}`).join(', ')}; receivers see the public address a NAT gives it.`,
      fix: 'Deliver from a public address of this host (OUTBOUND_ADDRESS), and check PTR and SPF for that address.',
    };
  return { name: 'reverse-dns', ok: true, message: found };
}

async function ptrOf(dns: ReturnType<typeof createDnsClient>, ip: string): Promise<string> {
  const reply = await dns.query(reverseName(ip), 'PTR');
  if (reply.kind === 'answer') return `PTR ${reply.answers.map((answer) => recordData<string>(answer)).join(', ')}`;
  return reply.kind === 'timeout' || reply.kind === 'error' ? 'the PTR look-up failed' : 'no PTR record';
}

/** A node that runs no MTA thread checks this host only: say so, so a split deployment checks its workers. */
function nodeRoleCheck(config: Config): DoctorCheck | null {
  if (config.role === 'worker' || config.role === 'all') return null;
  return {
    name: 'node',
    ok: true,
    message: `Warning: this node (${hostname()}, ROLE=${config.role}) does not deliver mail: the addresses below are this host's, not those of the worker nodes.`,
    fix: 'Run svc doctor --local on each worker node (ROLE=worker or all) with its environment: each checks its own addresses.',
  };
}

export async function directDeliveryChecks({ config, sequelize }: DirectDeliveryDeps): Promise<DoctorCheck[]> {
  const dns = createDnsClient({ servers: config.dnsServers });
  const resolver = await checkResolver(dns, config);
  const [dnssec, port25] = await Promise.all([checkDnssec(dns, config), checkPort25(resolver.target, config)]);
  const sources = config.outboundAddress ? [config.outboundAddress] : port25.localAddress ? [port25.localAddress] : [];
  const lookup = recordsLookup(config);
  const pools = await selectPoolIps(sequelize);
  const [ehlo, reverse, spf, platform] = await Promise.all([
    checkEhloName(dns, config.ehloName, sources),
    reverseDnsCheck(dns, sources, config.ehloName),
    checkSpf({ config, sequelize }, lookup, sources.length > 0 ? [...new Set([...sources, ...pools])] : []),
    checkPlatformRecords(config, lookup),
  ]);
  const role = nodeRoleCheck(config);
  return [
    ...(role ? [role] : []),
    { name: 'ehlo-name', ...ehlo },
    reverse,
    resolver.check,
    dnssec,
    port25.check,
    spf,
    ...platform,
  ];
}
