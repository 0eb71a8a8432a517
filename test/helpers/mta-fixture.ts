// One set-up for the MTA tests that run a daemon delivering directly (DELIVERY=direct): the test DNS
// server (with the DMARC record direct delivery requires of the sender), MX hosts on loopback aliases
// (127.0.0.x:25, mx-host.ts) with the records that route a domain to them, the world's database and
// tenant (send-daemon.ts), platform admins, the daemon itself and `svc` run in-process against it; one
// close() for all of it. A file builds its world in test.before in this order: start, hosts and
// records, seed, rows of its own (withDatabase), start the daemon.
import { isIPv6 } from 'node:net';
import { randomBytes } from 'node:crypto';
import { startDnsServer, type TestDnsServer } from './dns-server.ts';
import { startMxHost, type MxHost, type MxHostScript } from './mx-host.ts';
import {
  api,
  killAllDaemons,
  openWorldDatabase,
  publishSenderDmarc,
  seedSendWorld,
  startChildDaemon,
  stopChildDaemon,
  type ChildDaemon,
  type SendWorld,
  signAccessToken,
} from './send-daemon.ts';
import { InProcessCli, operationMatchers } from './svc-inprocess.ts';
import { waitFor } from './wait.ts';
import type { Database } from '../../daemon/db/index.ts';
import { Admin } from '../../daemon/modules/auth/model.ts';

export class MtaFixture {
  /** Set by seed(). */
  world!: SendWorld;
  /** Set by startDaemon(). */
  daemon: ChildDaemon | null = null;
  private readonly closables: Array<{ close(): unknown }> = [];
  private readonly clis: InProcessCli[] = [];

  private constructor(readonly dns: TestDnsServer) {}

  /** The test DNS server, with the sender's DMARC record; nothing else resolves until a test adds it. */
  static async start(): Promise<MtaFixture> {
    const dns = await startDnsServer();
    publishSenderDmarc(dns);
    return new MtaFixture(dns);
  }

  /**
   * An MX host on `address` (a loopback alias; mx-host.ts picks one without it) that mail to each of
   * `domains` reaches through the exchange mx.<domain>. Closed by close().
   */
  async mxHost(script: MxHostScript = {}, address?: string, domains: string[] = []): Promise<MxHost> {
    const host = await startMxHost(script, address);
    this.closeWith(host);
    for (const domain of domains) this.route(domain, `mx.${domain}`, host.address);
    return host;
  }

  /** `domain`'s MX is `exchange` (priority 10), which resolves to `address` (an AAAA record for IPv6). */
  route(domain: string, exchange: string, address: string): void {
    this.dns.zone.mx.set(domain, [{ exchange, priority: 10 }]);
    (isIPv6(address) ? this.dns.zone.aaaa : this.dns.zone.a).set(exchange, [address]);
  }

  /**
   * The world's database and tenant, for a daemon that delivers directly, resolving through this DNS
   * server, saying EHLO mta.acme.test; `env` adds to that or overrides it (undefined removes a setting).
   */
  async seed(env: Record<string, string | undefined> = {}): Promise<SendWorld> {
    const settings: Record<string, string | undefined> = {
      DELIVERY: 'direct',
      DNS_SERVERS: this.dns.address,
      EHLO_NAME: 'mta.acme.test',
      ...env,
    };
    const defined = Object.entries(settings).filter((entry): entry is [string, string] => entry[1] !== undefined);
    this.world = await seedSendWorld(Object.fromEntries(defined));
    return this.world;
  }

  /** Runs `work` on the world's database (the models bound to it), closed after: before the daemon starts. */
  async withDatabase<T>(work: (db: Database) => Promise<T>): Promise<T> {
    const db = await openWorldDatabase(this.world);
    try {
      return await work(db);
    } finally {
      await db.close();
    }
  }

  /**
   * A new admin (a platform admin unless told) and an access token for it, signed with the world's JWT
   * secret as a sign-in would sign it (it has no password). Before the daemon starts.
   */
  async adminToken(platformAdmin = true): Promise<string> {
    const admin = await this.withDatabase(() =>
      Admin.create({
        email: `${platformAdmin ? 'ops' : 'dev'}-${randomBytes(4).toString('hex')}@example.test`,
        passwordHash: 'fixture-has-no-password',
        isPlatformAdmin: platformAdmin,
        emailVerifiedAt: new Date(),
      }),
    );
    return signAccessToken(this.world, admin.id, platformAdmin);
  }

  /** Starts the daemon on the world and waits until it is ready. */
  async startDaemon(): Promise<ChildDaemon> {
    this.daemon = await startChildDaemon(this.world);
    return this.daemon;
  }

  /** `svc` run in-process against the daemon, signed in as `accessToken`'s admin when given. */
  async cli(accessToken?: string): Promise<InProcessCli> {
    const document = await (await fetch(`${this.world.url}/openapi.json`)).json();
    const cli = new InProcessCli(this.world.url, operationMatchers(document));
    this.clis.push(cli);
    if (accessToken) cli.writeProfile({ accessToken, email: 'ops@example.test' });
    return cli;
  }

  /** Something of the test's own (an HTTPS server, a receiver) to close with the fixture. */
  closeWith(closable: { close(): unknown }): void {
    this.closables.push(closable);
  }

  /** Sends one message as the world's tenant (or `apiKey`'s): its id, once the API accepted it (202). */
  async send(to: string | string[], fields: Record<string, unknown> = {}, apiKey = this.world.apiKey): Promise<string> {
    const res = await api({ ...this.world, apiKey }, 'POST', '/emails/send', {
      from: 'Acme <app@acme.test>',
      to,
      subject: `to ${[to].flat().join(', ')}`,
      textBody: 'Hello',
      ...fields,
    });
    if (res.status !== 202) throw new Error(`the send to ${to} answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body.id as string;
  }

  /** GET /emails/logs/{id}: the send's status, events and attempts. */
  async log(id: string): Promise<any> {
    const res = await api(this.world, 'GET', `/emails/logs/${id}`);
    if (res.status !== 200) throw new Error(`the log of ${id} answered ${res.status}: ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /**
   * /health/queues' outbound part as `accessToken`'s admin sees it: on a loaded machine the endpoint's 2 s
   * database budget may lapse (503), so it is asked until it answers 200.
   */
  async outboundHealth(accessToken: string): Promise<any> {
    let outbound: any = null;
    let last = '';
    await waitFor(
      '/health/queues to answer 200',
      async () => {
        const res = await fetch(`${this.world.url}/health/queues`, {
          headers: { authorization: `Bearer ${accessToken}` },
        });
        const body = await res.text();
        last = `${res.status} ${body.slice(0, 500)}`;
        if (res.status !== 200) return false;
        outbound = JSON.parse(body).outbound;
        return true;
      },
      { timeoutMs: 60_000, details: () => `its last answer: ${last}` },
    );
    return outbound;
  }

  /** Stops the daemon (SIGKILL after its grace), then closes the CLIs, hosts, servers and DNS server. */
  async close(): Promise<void> {
    for (const cli of this.clis) cli.cleanup();
    if (this.daemon) await stopChildDaemon(this.daemon);
    killAllDaemons();
    await Promise.all([...this.closables, this.dns].map((closable) => closable.close()));
  }
}
