// A real DNS server for tests (dns2 over UDP on 127.0.0.1, random port) answering from a zone the
// test can change while it runs. Names not in the zone are NXDOMAIN; names in `silent` never get
// an answer (to test resolver time-outs) and names in `servfail` get SERVFAIL.
import dgram from 'node:dgram';
import dns2 from 'dns2';

const { Packet } = dns2;

export interface TestZone {
  /** name → TXT records; a record given as an array is sent as several character strings. */
  txt: Map<string, (string | string[])[]>;
  cname: Map<string, string>;
  mx: Map<string, { exchange: string; priority: number }[]>;
  /** Names that exist without records of any type (answer NODATA instead of NXDOMAIN). */
  exists: Set<string>;
  /** Names whose queries are dropped without an answer. */
  silent: Set<string>;
  /** Names answered with SERVFAIL. */
  servfail: Set<string>;
  /** name → addresses (A and AAAA). */
  a: Map<string, string[]>;
  aaaa: Map<string, string[]>;
  /** Reverse names (`130.0.0.127.in-addr.arpa`) → host names (PTR). */
  ptr: Map<string, string[]>;
}

export interface TestDnsServer {
  zone: TestZone;
  /** `127.0.0.1:port`, the form DNS_SERVERS takes. */
  address: string;
  /** Every question received, as `TYPE name`. */
  queries: string[];
  close(): Promise<void>;
}

export function emptyZone(): TestZone {
  return {
    txt: new Map(),
    cname: new Map(),
    mx: new Map(),
    exists: new Set(),
    silent: new Set(),
    servfail: new Set(),
    a: new Map(),
    aaaa: new Map(),
    ptr: new Map(),
  };
}

/** Splits a long value into 255-byte character strings the way DNS providers publish DKIM keys. */
export function splitTxt(value: string, size = 255): string[] {
  const parts: string[] = [];
  for (let i = 0; i < value.length; i += size) parts.push(value.slice(i, i + size));
  return parts;
}

export async function startDnsServer(zone: TestZone = emptyZone()): Promise<TestDnsServer> {
  const queries: string[] = [];
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const name = question.name.toLowerCase().replace(/\.$/, '');
      const typeName =
        Object.entries(Packet.TYPE).find(([, value]) => value === question.type)?.[0] ?? String(question.type);
      queries.push(`${typeName} ${name}`);
      if (zone.silent.has(name)) return;
      if (zone.servfail.has(name)) {
        response.header.rcode = 2; // SERVFAIL
        void send(response);
        return;
      }
      const known =
        zone.txt.has(name) ||
        zone.cname.has(name) ||
        zone.mx.has(name) ||
        zone.a.has(name) ||
        zone.aaaa.has(name) ||
        zone.ptr.has(name) ||
        zone.exists.has(name);
      if (!known) {
        response.header.rcode = 3; // NXDOMAIN
        void send(response);
        return;
      }
      const base = { name: question.name, class: Packet.CLASS.IN, ttl: 60 };
      if (question.type === Packet.TYPE.TXT) {
        for (const data of zone.txt.get(name) ?? [])
          response.answers.push({ ...base, type: Packet.TYPE.TXT, data } as never);
      } else if (question.type === Packet.TYPE.CNAME && zone.cname.has(name)) {
        response.answers.push({ ...base, type: Packet.TYPE.CNAME, domain: zone.cname.get(name) } as never);
      } else if (question.type === Packet.TYPE.A) {
        for (const address of zone.a.get(name) ?? [])
          response.answers.push({ ...base, type: Packet.TYPE.A, address } as never);
      } else if (question.type === Packet.TYPE.AAAA) {
        for (const address of zone.aaaa.get(name) ?? [])
          response.answers.push({ ...base, type: Packet.TYPE.AAAA, address } as never);
      } else if (question.type === Packet.TYPE.PTR) {
        for (const domain of zone.ptr.get(name) ?? [])
          response.answers.push({ ...base, type: Packet.TYPE.PTR, domain } as never);
      } else if (question.type === Packet.TYPE.MX) {
        for (const mx of zone.mx.get(name) ?? [])
          response.answers.push({ ...base, type: Packet.TYPE.MX, ...mx } as never);
      }
      void send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  return {
    zone,
    address: `127.0.0.1:${addresses.udp!.port}`,
    queries,
    close: () => server.close(),
  };
}

/** A UDP socket that receives DNS queries and never answers. */
export async function startSilentDnsServer(): Promise<{ address: string; close(): Promise<void> }> {
  const socket = dgram.createSocket('udp4');
  socket.on('message', () => {});
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}

/** Puts records shaped like the API's `records`/`publish` items into the zone (long TXT values split). */
export function publishRecords(
  zone: TestZone,
  records: { type: string; name: string; value: string; priority?: number }[],
): void {
  for (const record of records) {
    const name = record.name.toLowerCase();
    if (record.type === 'TXT')
      zone.txt.set(name, [
        ...(zone.txt.get(name) ?? []),
        record.value.length > 255 ? splitTxt(record.value) : record.value,
      ]);
    else if (record.type === 'CNAME') zone.cname.set(name, record.value);
    else if (record.type === 'MX')
      zone.mx.set(name, [...(zone.mx.get(name) ?? []), { exchange: record.value, priority: record.priority ?? 10 }]);
  }
}
