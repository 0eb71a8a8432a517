// Is the EHLO name one a receiver accepts? A fully qualified name that resolves to the address the
// mail leaves from, whose PTR names it back (forward-confirmed reverse DNS). Asked by `svc doctor`
// and at boot (a warning in the log), through the MTA's resolver (DNS_SERVERS).
import { isFullyQualifiedName } from '../ehlo-name.ts';
import { recordData, type DnsClient } from './dns-query.ts';
import { checkReverseDns } from './reverse-dns.ts';

export interface EhloFinding {
  ok: boolean;
  message: string;
  fix?: string;
}

const bare = (name: string) => name.toLowerCase().replace(/\.$/, '');

/** The name's A and AAAA addresses, or why there are none. */
export async function addressesOf(dns: DnsClient, name: string): Promise<{ addresses: string[]; failure?: string }> {
  const replies = await Promise.all([dns.query(name, 'A'), dns.query(name, 'AAAA')]);
  const addresses = replies.flatMap((reply) =>
    reply.kind === 'answer' ? reply.answers.map((answer) => recordData<string>(answer)) : [],
  );
  const failed = replies.find((reply) => reply.kind === 'timeout' || reply.kind === 'error');
  if (addresses.length === 0 && failed)
    return { addresses, failure: failed.kind === 'error' ? failed.code : 'timeout' };
  return { addresses };
}

/** The EHLO name itself: an FQDN resolving to (one of) the source addresses, when they are known. */
export async function checkEhloName(dns: DnsClient, ehloName: string, sources: string[]): Promise<EhloFinding> {
  const where = sources.length > 0 ? sources.join(', ') : 'the outbound address';
  const fixName = `Set EHLO_NAME to a name such as mail.example.com, publish its A/AAAA record pointing at ${where}, and have the owner of ${where} set the PTR to that name.`;
  if (!isFullyQualifiedName(ehloName))
    return {
      ok: false,
      message: `The EHLO name is ${ehloName}: not a fully qualified domain name, which Gmail and Microsoft refuse or score down.`,
      fix: fixName,
    };
  const name = bare(ehloName);
  const { addresses, failure } = await addressesOf(dns, name);
  if (failure) return { ok: false, message: `The look-up of ${name} failed (${failure}).`, fix: fixName };
  if (addresses.length === 0)
    return { ok: false, message: `The EHLO name ${name} does not resolve (no A or AAAA record).`, fix: fixName };
  if (sources.length > 0 && !sources.some((source) => addresses.includes(source)))
    return {
      ok: false,
      message: `The EHLO name ${name} resolves to ${addresses.join(', ')}, not to the outbound address ${where}.`,
      fix: fixName,
    };
  return { ok: true, message: `The EHLO name ${name} is fully qualified and resolves to ${addresses.join(', ')}.` };
}

/**
 * What boot warns about (DELIVERY=direct): the EHLO name, and the FCrDNS of the source address
 * (OUTBOUND_ADDRESS, else the addresses the name resolves to). An empty list: nothing to say.
 */
export async function ehloWarnings(
  dns: DnsClient,
  options: { ehloName: string; outboundAddress: string | null },
): Promise<string[]> {
  const sources = options.outboundAddress ? [options.outboundAddress] : [];
  const name = await checkEhloName(dns, options.ehloName, sources);
  if (!name.ok) return [`${name.message} ${name.fix}`];
  const addresses = sources.length > 0 ? sources : (await addressesOf(dns, bare(options.ehloName))).addresses;
  const reverse = await Promise.all(addresses.map((ip) => checkReverseDns(dns, ip, options.ehloName)));
  return reverse
    .filter((check) => !check.ok)
    .map((check) => `No forward-confirmed reverse DNS: ${check.message}. Receivers refuse mail without it.`);
}
