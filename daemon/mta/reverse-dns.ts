// Forward-confirmed reverse DNS of a source address (Gmail's rule for senders: "the sending IP must
// have a PTR record, and the name it gives must resolve back to that IP"), with the EHLO name as the
// name the PTR must give, as receivers compare the two. Through the MTA's resolver (DNS_SERVERS).
import { isIPv4 } from 'node:net';
import { recordData, type DnsClient } from './dns-query.ts';

/** The reverse-lookup name of an address: 4.3.2.1.in-addr.arpa, or nibbles under ip6.arpa. */
export function reverseName(ip: string): string {
  if (isIPv4(ip)) return `${ip.split('.').reverse().join('.')}.in-addr.arpa`;
  const [head, tail = ''] = ip.split('::');
  const groups = (part: string) => (part ? part.split(':') : []);
  const missing = 8 - groups(head).length - groups(tail).length;
  const full = [...groups(head), ...Array<string>(ip.includes('::') ? missing : 0).fill('0'), ...groups(tail)];
  const nibbles = full.map((group) => group.padStart(4, '0')).join('');
  return `${[...nibbles].reverse().join('.')}.ip6.arpa`;
}

const bare = (name: string) => name.toLowerCase().replace(/\.$/, '');

export interface ReverseDnsCheck {
  ok: boolean;
  /** What was found, in a sentence. */
  message: string;
}

export async function checkReverseDns(dns: DnsClient, ip: string, ehloName: string): Promise<ReverseDnsCheck> {
  const expected = bare(ehloName);
  const ptr = await dns.query(reverseName(ip), 'PTR');
  if (ptr.kind === 'timeout' || ptr.kind === 'error')
    return { ok: false, message: `${ip}: the PTR look-up failed (${ptr.kind === 'timeout' ? 'timeout' : ptr.code})` };
  const names = ptr.kind === 'answer' ? ptr.answers.map((answer) => bare(recordData<string>(answer))) : [];
  if (names.length === 0) return { ok: false, message: `${ip} has no PTR record (it should be ${expected})` };
  if (!names.includes(expected))
    return { ok: false, message: `${ip}'s PTR is ${names.join(', ')}, not its EHLO name ${expected}` };
  const [v4, v6] = await Promise.all([dns.query(expected, 'A'), dns.query(expected, 'AAAA')]);
  const addresses = [v4, v6].flatMap((reply) =>
    reply.kind === 'answer' ? reply.answers.map((answer) => recordData<string>(answer)) : [],
  );
  if (!addresses.includes(ip))
    return {
      ok: false,
      message: `${expected} resolves to ${addresses.join(', ') || 'no address'}, not back to ${ip}`,
    };
  return { ok: true, message: `${ip} ⇄ ${expected}` };
}
