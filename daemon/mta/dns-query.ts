// DNS questions for the MTA, asked with dns-packet rather than node:dns because delivery needs what
// node:dns hides: each answer's TTL (routes are cached by it) and the AD flag of a validating resolver
// (RFC 7672: TLSA records count only when the resolver says it validated them). Every failure is an
// answer (timeout, servfail, error), never a throw: the caller decides between deferral and failure.
import dgram from 'node:dgram';
import { getServers } from 'node:dns';
import net, { type LookupFunction } from 'node:net';
import { randomInt } from 'node:crypto';
import dnsPacket, { type Answer, type RecordType } from 'dns-packet';

export const MTA_DNS_TIMEOUT_MS = 5000;

export type DnsReply =
  | {
      kind: 'answer';
      /** NOERROR with records of the type asked (after following CNAMEs the resolver included). */
      answers: Answer[];
      /** The resolver's AD flag: it validated the whole chain with DNSSEC. */
      authentic: boolean;
    }
  /** The name exists without records of this type. */
  | { kind: 'nodata'; authentic: boolean }
  | { kind: 'nxdomain'; authentic: boolean }
  | { kind: 'timeout' }
  /** SERVFAIL (what a validating resolver answers for bogus DNSSEC), REFUSED, a socket error… */
  | { kind: 'error'; code: string };

export interface DnsClient {
  query(name: string, type: RecordType): Promise<DnsReply>;
}

interface Server {
  host: string;
  port: number;
}

/** `ip`, `ip:port`, `[v6]:port` or a bare v6 address, as DNS_SERVERS takes them. */
export function parseDnsServer(entry: string): Server {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) return { host: bracketed[1], port: Number(bracketed[2] ?? 53) };
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3})(?::(\d+))?$/.exec(entry);
  if (v4) return { host: v4[1], port: Number(v4[2] ?? 53) };
  return { host: entry, port: 53 };
}

const RCODE_ERRORS: Record<string, string> = { SERVFAIL: 'ESERVFAIL', REFUSED: 'EREFUSED', FORMERR: 'EFORMERR' };

function readReply(packet: dnsPacket.DecodedPacket, type: RecordType): DnsReply {
  const authentic = packet.flag_ad;
  // dns-packet decodes the rcode by name; its types leave the field out.
  const rcode = (packet as { rcode?: string }).rcode ?? 'NOERROR';
  if (rcode === 'NXDOMAIN') return { kind: 'nxdomain', authentic };
  if (rcode !== 'NOERROR') return { kind: 'error', code: RCODE_ERRORS[rcode] ?? `E${rcode}` };
  const answers = (packet.answers ?? []).filter((answer) => answer.type === type);
  return answers.length === 0 ? { kind: 'nodata', authentic } : { kind: 'answer', answers, authentic };
}

function questionPacket(id: number, name: string, type: RecordType): dnsPacket.Packet {
  return {
    type: 'query',
    id,
    // RD, and AD in the query (RFC 6840 §5.7): a validating resolver then reports AD in its answer.
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.AUTHENTIC_DATA,
    questions: [{ type, name, class: 'IN' }],
    // EDNS0 with DO: room for TLSA/TXT answers over UDP, and DNSSEC-aware answers.
    additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, flags: dnsPacket.DNSSEC_OK } as never],
  };
}

function askUdp(server: Server, name: string, type: RecordType, timeoutMs: number): Promise<Buffer | 'timeout'> {
  return new Promise((resolve, reject) => {
    const id = randomInt(0, 65536);
    const socket = dgram.createSocket(net.isIPv6(server.host) ? 'udp6' : 'udp4');
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    function finish(result: Buffer | 'timeout' | Error) {
      clearTimeout(timer);
      socket.close();
      if (result instanceof Error) reject(result);
      else resolve(result);
    }
    socket.on('error', (error) => finish(error));
    socket.on('message', (message) => {
      // Answers to another id (a late reply to an earlier question) are not ours.
      if (message.length >= 2 && message.readUInt16BE(0) === id) finish(message);
    });
    socket.send(dnsPacket.encode(questionPacket(id, name, type)), server.port, server.host);
  });
}

function askTcp(server: Server, name: string, type: RecordType, timeoutMs: number): Promise<Buffer | 'timeout'> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(server.port, server.host);
    let received = Buffer.alloc(0);
    const timer = setTimeout(() => finish('timeout'), timeoutMs);
    function finish(result: Buffer | 'timeout' | Error) {
      clearTimeout(timer);
      socket.destroy();
      if (result instanceof Error) reject(result);
      else resolve(result);
    }
    socket.on('error', (error) => finish(error));
    socket.on('connect', () => socket.write(dnsPacket.streamEncode(questionPacket(randomInt(0, 65536), name, type))));
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      if (received.length >= 2 && received.length >= 2 + received.readUInt16BE(0)) finish(received.subarray(2));
    });
  });
}

/** One client per MTA thread; it keeps no state, each question is its own socket. */
export function createDnsClient(options: { servers: string[]; timeoutMs?: number }): DnsClient {
  const timeoutMs = options.timeoutMs ?? MTA_DNS_TIMEOUT_MS;
  const servers = (options.servers.length > 0 ? options.servers : getServers()).map(parseDnsServer);
  return {
    async query(name, type) {
      let last: DnsReply = { kind: 'timeout' };
      // The next server is asked only when one did not answer (a timeout or a socket error); an
      // answer, even NXDOMAIN or SERVFAIL, is the answer.
      for (const server of servers) {
        try {
          let raw = await askUdp(server, name, type, timeoutMs);
          if (raw !== 'timeout' && (dnsPacket.decode(raw).flags ?? 0) & dnsPacket.TRUNCATED_RESPONSE)
            raw = await askTcp(server, name, type, timeoutMs);
          if (raw === 'timeout') continue;
          return readReply(dnsPacket.decode(raw), type);
        } catch (error) {
          last = { kind: 'error', code: (error as { code?: string }).code ?? 'EUNKNOWN' };
        }
      }
      return last;
    },
  };
}

/** Answers with a TTL of 0 are still kept this long, for a burst of messages to the same domain… */
export const MINIMUM_CACHE_SECONDS = 5;
/** …and none longer than this. */
export const MAXIMUM_CACHE_SECONDS = 3600;

/** How long the MTA keeps what it built from answers whose smallest TTL is `ttlSeconds`. */
export function cacheSeconds(ttlSeconds: number): number {
  return Math.min(MAXIMUM_CACHE_SECONDS, Math.max(MINIMUM_CACHE_SECONDS, ttlSeconds));
}

/** The smallest TTL of the answers (seconds), for caching what was built from them. */
export function minimumTtl(answers: Answer[], fallbackSeconds: number): number {
  const ttls = answers.map((answer) => ('ttl' in answer && typeof answer.ttl === 'number' ? answer.ttl : null));
  const known = ttls.filter((ttl): ttl is number => ttl !== null);
  return known.length > 0 ? Math.min(...known) : fallbackSeconds;
}

/** The data of a record answer (every type asked here has one; only OPT pseudo-records lack it). */
export function recordData<T>(answer: Answer): T {
  return (answer as unknown as { data: T }).data;
}

/** node's connect look-up answered from our DNS client, so the policy host resolves through DNS_SERVERS. */
export function lookupThrough(dns: DnsClient): LookupFunction {
  return (hostname, options, callback) => {
    void (async () => {
      const [v4, v6] = await Promise.all([dns.query(hostname, 'A'), dns.query(hostname, 'AAAA')]);
      const found = [
        ...(v4.kind === 'answer' ? v4.answers.map((a) => ({ address: recordData<string>(a), family: 4 })) : []),
        ...(v6.kind === 'answer' ? v6.answers.map((a) => ({ address: recordData<string>(a), family: 6 })) : []),
      ];
      if (found.length === 0)
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 4);
      if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: typeof found) => void)(null, found);
      else callback(null, found[0].address, found[0].family);
    })();
  };
}
