// DNS look-ups for domain checks. Every failure is an answer (nxdomain, nodata, timeout, error),
// never a throw, so one slow record cannot turn a diagnosis into a 500.
import { Resolver } from 'node:dns/promises';

export const DNS_TIMEOUT_MS = 3000;

export type Lookup<T> =
  | { kind: 'ok'; values: T[] }
  /** The name exists but has no record of this type. */
  | { kind: 'nodata' }
  | { kind: 'nxdomain' }
  | { kind: 'timeout' }
  | { kind: 'error'; code: string };

export interface MxHost {
  exchange: string;
  priority: number;
}

export interface DnsLookup {
  /** TXT records, each with its character strings joined (long DKIM keys come split in 255-byte pieces). */
  txt(name: string): Promise<Lookup<string>>;
  cname(name: string): Promise<Lookup<string>>;
  mx(name: string): Promise<Lookup<MxHost>>;
}

export interface DnsLookupOptions {
  /** `ip` or `ip:port` entries; empty uses the system's resolvers. */
  servers: string[];
  timeoutMs?: number;
}

function failure(error: unknown): Exclude<Lookup<never>, { kind: 'ok' }> {
  const code = (error as { code?: string }).code ?? 'EUNKNOWN';
  switch (code) {
    case 'ENOTFOUND':
      return { kind: 'nxdomain' };
    case 'ENODATA':
      return { kind: 'nodata' };
    case 'ETIMEOUT':
      return { kind: 'timeout' };
    default:
      return { kind: 'error', code };
  }
}

export function normalizeHostName(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, '');
}

/** One instance per check: answers are remembered so an SPF include loop costs one query per name. */
export function createDnsLookup(options: DnsLookupOptions): DnsLookup {
  const resolver = new Resolver({ timeout: options.timeoutMs ?? DNS_TIMEOUT_MS, tries: 1 });
  if (options.servers.length > 0) resolver.setServers(options.servers);
  const memo = new Map<string, Promise<Lookup<unknown>>>();

  function remember<T>(key: string, run: () => Promise<T[]>): Promise<Lookup<T>> {
    let pending = memo.get(key) as Promise<Lookup<T>> | undefined;
    if (!pending) {
      pending = run().then(
        (values): Lookup<T> => (values.length === 0 ? { kind: 'nodata' } : { kind: 'ok', values }),
        (error: unknown) => failure(error),
      );
      memo.set(key, pending);
    }
    return pending;
  }

  return {
    txt: (name) =>
      remember(`TXT ${name}`, async () => (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''))),
    cname: (name) => remember(`CNAME ${name}`, async () => (await resolver.resolveCname(name)).map(normalizeHostName)),
    mx: (name) =>
      remember(`MX ${name}`, async () =>
        (await resolver.resolveMx(name)).map((mx) => ({
          exchange: normalizeHostName(mx.exchange),
          priority: mx.priority,
        })),
      ),
  };
}
