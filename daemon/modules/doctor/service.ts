// Is this deployment ready? Each check answers (never throws) with what it found and, when it is
// not right, the fix. The same checks serve GET /platform/doctor (a running daemon, asked remotely)
// and `svc doctor --local` (run beside the daemon with its environment, before or after boot).
import { errorText } from '../../errors.ts';
import { statfs } from 'node:fs/promises';
import { isIP } from 'node:net';
import type { Redis } from 'ioredis';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { Config } from '../../config.ts';
import { SECRET_MISMATCH_MESSAGE, type Secrets } from '../../secrets.ts';
import { pendingMigrations } from '../../db/migrate.ts';
import { smtpSettingsFromUrl, verifySmtp } from '../../mail/transport.ts';
import { queueStats } from '../../queue/stats.ts';
import { SYSTEM_SENDER_FIX, systemSenderStatus } from '../../mail/system-mail.ts';
import { seenNodes } from '../../db/nodes.ts';
import { checkPoolAddressesBindable } from './pool-bind.ts';
import { createDnsClient } from '../../mta/dns-query.ts';
import { checkReverseDns } from '../../mta/reverse-dns.ts';
import { directDeliveryChecks, doctorNode, relayUnderDirectDelivery } from './direct-delivery.ts';
import type { EventLoopMonitor } from '../metrics/event-loop.ts';
import { checkMetricsExposure } from './metrics-exposure.ts';
import type { DoctorCheck, DoctorReport } from '../../../shared/schemas/doctor.ts';

export interface DoctorDeps {
  config: Config;
  /** The secret of the node being checked (null: none configured or generated yet). */
  secrets: Pick<Secrets, 'keyCheck'> | null;
  sequelize: Sequelize;
  redis: Redis | null;
  /** True on the embedded PGlite (one node by construction). */
  embedded: boolean;
  /** The answering daemon's event-loop delay; absent for `svc doctor --local` (no daemon in this process). */
  eventLoop?: EventLoopMonitor;
}

/**
 * Event-loop delay above which the doctor warns (over the last one to two minutes): p99 at the
 * inbound rule's own bound ("nothing a stranger sends blocks the loop for more than ~50 ms"), and
 * any single stall long enough for clients to notice.
 */
export const EVENT_LOOP_P99_WARN_MS = 50;
export const EVENT_LOOP_MAX_WARN_MS = 250;

const MIN_FREE_BYTES = 1024 ** 3;
const MIN_FREE_RATIO = 0.05;

/** Before the first boot (or after an upgrade) the checks that read tables cannot run: say so, and how to migrate. */
const MIGRATE_FIX =
  'Run the migrations once with this environment: svc db migrate (the daemon also runs them when it starts), then run svc doctor --local again.';

const pass = (name: string, message: string): DoctorCheck => ({ name, ok: true, message });
const fail = (name: string, message: string, fix: string): DoctorCheck => ({ name, ok: false, message, fix });

function isLocalHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === 'localhost' || bare.endsWith('.localhost') || bare.startsWith('127.') || bare === '::1';
}

async function checkSecret({ config, embedded, secrets, sequelize }: DoctorDeps): Promise<DoctorCheck> {
  const [stored] = await sequelize.query<{ check_value: string }>(
    'SELECT check_value FROM platform_secrets_check WHERE id = 1',
    { type: QueryTypes.SELECT },
  );
  if (!secrets)
    return fail(
      'secret',
      `No secret: JWT_SECRET is not set and ${config.dataDir}/secret.key does not exist.`,
      'Set JWT_SECRET to the value every other node uses.',
    );
  if (stored && stored.check_value !== secrets.keyCheck)
    return fail(
      'secret',
      `JWT_SECRET does not match the database: ${SECRET_MISMATCH_MESSAGE}`,
      'Give this node the JWT_SECRET of the first node.',
    );
  const matches = stored ? 'matches the database' : 'is not recorded in the database yet (the first boot records it)';
  if (config.jwtSecret) return pass('secret', `JWT_SECRET is set and ${matches}.`);
  if (embedded)
    return pass(
      'secret',
      `The secret generated into ${config.dataDir}/secret.key ${matches}; fine for one node on the embedded database.`,
    );
  return fail(
    'secret',
    `JWT_SECRET is not set: this node uses its own generated ${config.dataDir}/secret.key (it ${matches}), and a second node would generate another.`,
    `Set JWT_SECRET to the same value on every node (for example the content of ${config.dataDir}/secret.key).`,
  );
}

function checkPublicUrl({ config }: DoctorDeps): DoctorCheck {
  const url = new URL(config.publicUrl);
  if (config.nodeEnv !== 'production')
    return pass('public-url', `PUBLIC_URL is ${config.publicUrl} (development: http is accepted).`);
  if (url.protocol !== 'https:')
    return fail(
      'public-url',
      `PUBLIC_URL is ${config.publicUrl}: links in mail (unsubscribe, tracking, password reset) would travel in clear.`,
      'Set PUBLIC_URL to the https:// address recipients reach the daemon at.',
    );
  if (isLocalHost(url.hostname) || isIP(url.hostname.replace(/^\[|\]$/g, ''))) {
    return fail(
      'public-url',
      `PUBLIC_URL is ${config.publicUrl}: recipients cannot open links to that host.`,
      'Set PUBLIC_URL to the public https:// name of the daemon.',
    );
  }
  return pass('public-url', `PUBLIC_URL is ${config.publicUrl}.`);
}

async function checkRelay({ config }: DoctorDeps): Promise<DoctorCheck> {
  if (config.delivery === 'direct') return relayUnderDirectDelivery(config);
  if (!config.smtpUrl) {
    if (config.nodeEnv === 'production')
      return fail(
        'relay',
        'SMTP_URL is not set: mail is captured and nothing leaves this machine.',
        'Set SMTP_URL=smtp://user:pass@relay:587 (or smtps://…:465).',
      );
    return pass('relay', 'No SMTP_URL: mail is captured (development).');
  }
  const settings = smtpSettingsFromUrl(config.smtpUrl);
  const verified = await verifySmtp(settings);
  const where = `${settings.host}:${settings.port}`;
  if (!verified.ok && verified.tls)
    return fail(
      'relay',
      `The relay ${where} did not complete STARTTLS: ${verified.error} (${verified.tls.code}); ${verified.tls.fix}`,
      verified.tls.fix,
    );
  if (!verified.ok)
    return fail(
      'relay',
      `The relay ${where} did not complete EHLO/STARTTLS/AUTH: ${verified.error}.`,
      'Check SMTP_URL (host, port, user, password) and that this node may connect to the relay.',
    );
  return pass(
    'relay',
    `The relay ${where} answered EHLO${settings.secure ? ' over TLS' : ''}${settings.user ? ' and accepted AUTH' : ''}.`,
  );
}

async function checkPlatformSender({ sequelize, config }: DoctorDeps): Promise<DoctorCheck> {
  // The same resolution and signing rule the system mail worker uses (mail/system-mail.ts).
  const status = await systemSenderStatus(sequelize, config);
  if (!status.routable)
    return fail(
      'platform-sender',
      `System mail would go from ${status.from}, which is not on a routable domain.`,
      SYSTEM_SENDER_FIX,
    );
  if (!status.signedBy) {
    // The address is right (or on its way): what is missing is the verification of its domain.
    return fail(
      'platform-sender',
      `System mail goes from ${status.from} (${status.source}) but is not DKIM-signed: its domain ${status.domain} is not verified in a tenant owned by a platform admin.`,
      `Verify ${status.domain} in your own tenant: svc domains add ${status.domain}, publish the records of svc domains dns ${status.domain}, then svc domains verify ${status.domain}.`,
    );
  }
  if (status.source !== 'setting') {
    return fail(
      'platform-sender',
      `System mail goes from ${status.from}, taken from ${status.source === 'environment' ? 'SYSTEM_MAIL_FROM' : 'PUBLIC_URL'}; signed by ${status.signedBy}.`,
      SYSTEM_SENDER_FIX,
    );
  }
  return pass('platform-sender', `System mail goes from ${status.from}, DKIM-signed by ${status.signedBy}.`);
}

async function checkRedis({ sequelize, redis, config, embedded }: DoctorDeps): Promise<DoctorCheck> {
  const nodes = embedded ? [] : await seenNodes(sequelize);
  if (redis) {
    try {
      await redis.ping();
      return pass(
        'redis',
        `Redis answers; rate limits are shared by the ${Math.max(nodes.length, 1)} running node(s).`,
      );
    } catch (error) {
      return fail(
        'redis',
        `REDIS_URL is set but Redis does not answer: ${errorText(error)}.`,
        'Start Redis or correct REDIS_URL.',
      );
    }
  }
  if (config.redisUrl)
    return fail(
      'redis',
      'REDIS_URL is set but this check could not connect to it.',
      'Start Redis or correct REDIS_URL.',
    );
  if (nodes.length > 1) {
    return fail(
      'redis',
      `${nodes.length} nodes share this database without Redis: each counts rate limits on its own, so clients get ${nodes.length}× the limit.`,
      'Set REDIS_URL (the same on every node).',
    );
  }
  return pass(
    'redis',
    'One node: rate-limit counters in process are enough (set REDIS_URL before adding a second node).',
  );
}

async function checkMigrations({ sequelize }: DoctorDeps): Promise<DoctorCheck> {
  const pending = await pendingMigrations(sequelize);
  if (pending.length) {
    const shown = pending.length > 5 ? `${pending.slice(0, 5).join(', ')} … ${pending.at(-1)}` : pending.join(', ');
    return fail('migrations', `${pending.length} migration(s) pending: ${shown}.`, MIGRATE_FIX);
  }
  return pass('migrations', 'Every migration is applied.');
}

async function checkQueues({ sequelize, config }: DoctorDeps): Promise<DoctorCheck> {
  const queues = await queueStats(sequelize, config.queueStuckAfterMs);
  const stuck = Object.entries(queues).filter(([, stats]) => stats.stuck);
  if (stuck.length) {
    const detail = stuck
      .map(
        ([name, stats]) => `${name} (${stats.depth} waiting, oldest ${Math.round(stats.oldestWaitingAgeMs / 1000)} s)`,
      )
      .join(', ');
    return fail(
      'queues',
      `Queues stuck: ${detail}.`,
      'Check that worker nodes run (ROLE=worker or all) and /health/ready on each; svc daemon status shows the workers.',
    );
  }
  const failed = Object.values(queues).reduce((sum, stats) => sum + stats.failed, 0);
  return pass('queues', `No queue is stuck${failed ? ` (${failed} job(s) kept in failed_jobs)` : ''}.`);
}

async function checkDisk({ config }: DoctorDeps): Promise<DoctorCheck> {
  let stats;
  try {
    stats = await statfs(config.dataDir);
  } catch {
    return pass('disk', `DATA_DIR ${config.dataDir} does not exist on this node (nothing is stored locally).`);
  }
  const free = stats.bavail * stats.bsize;
  const total = stats.blocks * stats.bsize;
  const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
  if (free < MIN_FREE_BYTES || free / total < MIN_FREE_RATIO) {
    return fail(
      'disk',
      `Only ${gib(free)} of ${gib(total)} free under DATA_DIR ${config.dataDir}.`,
      'Free space or move DATA_DIR; shorten retention so old logs and captured messages are dropped sooner.',
    );
  }
  return pass('disk', `${gib(free)} free of ${gib(total)} under DATA_DIR.`);
}

/** Every IP pool address: its PTR is its EHLO name, and that name resolves back to it (FCrDNS). */
async function checkIpPools({ sequelize, config }: DoctorDeps): Promise<DoctorCheck> {
  const addresses = await sequelize.query<{ ip: string; ehlo_name: string; pool: string }>(
    `SELECT a.ip, a.ehlo_name, p.name AS pool FROM ip_pool_addresses a JOIN ip_pools p ON p.id = a.pool_id ORDER BY p.name, a.ip`,
    { type: QueryTypes.SELECT },
  );
  if (addresses.length === 0)
    return pass(
      'ip-pools',
      config.delivery === 'relay'
        ? 'No IP pool addresses (DELIVERY=relay: the relay sends from its own addresses).'
        : 'No IP pool addresses: direct delivery leaves from OUTBOUND_ADDRESS (or the system’s choice).',
    );
  const dns = createDnsClient({ servers: config.dnsServers });
  const results = await Promise.all(addresses.map((address) => checkReverseDns(dns, address.ip, address.ehlo_name)));
  const failed = results.filter((result) => !result.ok);
  if (failed.length > 0)
    return fail(
      'ip-pools',
      `Reverse DNS does not match the EHLO name for ${failed.length} of ${addresses.length} pool address(es): ${failed.map((result) => result.message).join('; ')}.`,
      'Have the owner of each IP set its PTR to the EHLO name given in the pool (svc pools), and publish an A/AAAA record of that name pointing back at the IP; Gmail refuses mail from IPs without it.',
    );
  return pass(
    'ip-pools',
    `Reverse DNS matches the EHLO name and resolves back for all ${addresses.length} pool address(es): ${results.map((result) => result.message).join(', ')}.`,
  );
}

function checkEventLoop({ eventLoop }: DoctorDeps): DoctorCheck {
  if (!eventLoop)
    return pass(
      'event-loop',
      'Measured by a running daemon: run svc doctor without --local to see its event-loop delay.',
    );
  const delay = eventLoop.recent();
  const measured = `p99 ${delay.p99Ms.toFixed(0)} ms, max ${delay.maxMs.toFixed(0)} ms over the last minute or two`;
  // A warning, not a failure: a stall is over by the time it is seen, and must not gate a deploy.
  if (delay.p99Ms >= EVENT_LOOP_P99_WARN_MS || delay.maxMs >= EVENT_LOOP_MAX_WARN_MS)
    return {
      name: 'event-loop',
      ok: true,
      message: `Warning: the event loop of the answering daemon was held up (${measured}; warns from p99 ${EVENT_LOOP_P99_WARN_MS} ms or max ${EVENT_LOOP_MAX_WARN_MS} ms): every request and SMTP session waited.`,
      fix: 'Look at the log around that time and at /metrics (svc_event_loop_delay_seconds, svc_event_loop_delay_recent_*); check that the node has CPU to spare.',
    };
  return pass('event-loop', `Event-loop delay ${measured}.`);
}

type CheckRun = (deps: DoctorDeps) => DoctorCheck | DoctorCheck[] | Promise<DoctorCheck | DoctorCheck[]>;

const CHECKS: { name: string; run: CheckRun }[] = [
  { name: 'secret', run: checkSecret },
  { name: 'public-url', run: checkPublicUrl },
  { name: 'relay', run: checkRelay },
  { name: 'platform-sender', run: checkPlatformSender },
  { name: 'redis', run: checkRedis },
  { name: 'migrations', run: checkMigrations },
  { name: 'queues', run: checkQueues },
  { name: 'disk', run: checkDisk },
  { name: 'event-loop', run: checkEventLoop },
  { name: 'metrics', run: checkMetricsExposure },
  { name: 'ip-pools', run: checkIpPools },
  { name: 'pool-bind', run: checkPoolAddressesBindable },
  // Several lines (EHLO name, reverse DNS, resolver, port 25, SPF, …), only when this node delivers itself.
  { name: 'direct-delivery', run: (deps) => (deps.config.delivery === 'direct' ? directDeliveryChecks(deps) : []) },
];

/** The table a query needed and did not find (PostgreSQL 42P01): the database is not migrated. */
function missingTable(error: unknown): string | null {
  const original = (error as { original?: { code?: string; message?: string } } | null)?.original;
  if (original?.code !== '42P01') return null;
  return /relation "([^"]+)"/.exec(original.message ?? '')?.[1] ?? 'a table';
}

export async function runDoctor(deps: DoctorDeps): Promise<DoctorReport> {
  const checks = await Promise.all(
    CHECKS.map(async (check) => {
      try {
        return await check.run(deps);
      } catch (error) {
        const table = missingTable(error);
        if (table)
          return fail(
            check.name,
            `Not checked: migrations are pending (the table ${table} does not exist yet).`,
            MIGRATE_FIX,
          );
        return fail(
          check.name,
          `The check could not run: ${errorText(error)}.`,
          'Check that the database answers (svc daemon status).',
        );
      }
    }),
  );
  const lines = checks.flat();
  return { ok: lines.every((check) => check.ok), node: doctorNode(deps.config), checks: lines };
}
