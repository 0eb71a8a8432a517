// Compressed DMARC reports whose headers lie (issue 32): delivered by swaks to the inbound SMTP port
// of a real daemon (`svc daemon start`), each built here byte by byte — a zip and a gzip claiming
// 1,000 bytes that inflate to 1 GiB, a zip of 10,000 tiny entries, a zip inside a zip, a cut-off
// zip, a gzip with a wrong CRC. Each must be refused with its reason in the daemon's log and nothing
// stored, while /health/ready keeps answering, the daemon's own event-loop delay (its /metrics)
// stays under 100 ms and its resident memory grows by less than 50 MB.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { QueryTypes } from 'sequelize';
import { freePort, swaks } from './helpers/swaks.ts';
import { gzipMember, repeatedDeflate, zipArchive } from './helpers/archives.ts';
import {
  killAllDaemons,
  openWorldDatabase,
  seedSendWorld,
  startChildDaemon,
  stopChildDaemon,
  type ChildDaemon,
  type SendWorld,
} from './helpers/send-daemon.ts';
import { pollReadiness } from './helpers/readiness-probes.ts';
import { waitFor } from './helpers/wait.ts';
import { longestBetween, parsePrometheusText, type Exposition } from './helpers/prometheus-text.ts';

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;
const XML = readFileSync(
  fileURLToPath(new URL('./fixtures/dmarc/google.com!acme.test!1335571200!1335657599.xml', import.meta.url)),
);
const HONEST_GZIP = fileURLToPath(
  new URL('./fixtures/dmarc/enterprise.protection.outlook.com!acme.test!1335657600!1335743999.xml.gz', import.meta.url),
);
const scratch = mkdtempSync(join(tmpdir(), 'svc-dmarc-bombs-'));
let world: SendWorld;
let daemon: ChildDaemon;
let inboundPort: number;

test.before(async () => {
  inboundPort = await freePort();
  world = await seedSendWorld({ SMTP_INBOUND_PORT: String(inboundPort) });
  daemon = await startChildDaemon(world);
});
test.after(async () => {
  killAllDaemons();
  await world?.database.drop();
  rmSync(scratch, { recursive: true, force: true });
});

function deliver(name: string, content: Buffer) {
  const file = join(scratch, name);
  writeFileSync(file, content);
  return swaks(inboundPort, [
    '--from',
    'noreply-dmarc-support@google.com',
    '--to',
    'dmarc-reports@localhost',
    '--header',
    'Subject: Report domain: acme.test Submitter: google.com',
    '--attach-type',
    'application/octet-stream',
    '--attach-name',
    name,
    '--attach',
    `@${file}`,
  ]);
}

/** One scrape of /metrics, checked as Prometheus would read it. */
async function metrics(): Promise<Exposition> {
  return parsePrometheusText(await (await fetch(`${daemon.url}/metrics`)).text());
}

/** The longest event-loop delay between two scrapes, in ms (a bucket bound of svc_event_loop_delay_seconds). */
const longestMs = (before: Exposition, after: Exposition) =>
  longestBetween(before, after, 'svc_event_loop_delay_seconds') * 1000;

/** 1 MiB of XML-ish text repeated 1024 times: 1 GiB inflated, ~1.6 MB deflated (670:1). */
function gibibyteOfXml(): Buffer {
  const block = Buffer.from('<a>0</a>'.repeat(MIB / 8));
  return repeatedDeflate(block, GIB / MIB);
}

/** 64 MiB of XML-ish text with a random id every 2 KiB: ~127:1, under the ratio guard, past the size cap. */
function denseXml(): Buffer {
  const parts: string[] = [];
  for (let i = 0; i < MIB / 2048; i++) parts.push(randomBytes(8).toString('hex'), '<a>0</a>'.repeat((2048 - 16) / 8));
  return repeatedDeflate(Buffer.from(parts.join('')), 64);
}

test('lying, crowded, nested, truncated and corrupt archives are refused with a reason; the daemon never stalls', async () => {
  const deflated = gibibyteOfXml();
  assert.ok(deflated.length < 2 * MIB, `${deflated.length} bytes`);
  const honestZip = zipArchive([{ name: 'google.com!acme.test!1335571200!1335657599.xml', content: XML }]);
  const wrongCrc = gzipSync(XML);
  wrongCrc.writeUInt32LE(wrongCrc.readUInt32LE(wrongCrc.length - 8) ^ 0xffffffff, wrongCrc.length - 8);
  // An honest report first, and a benign attachment as large as the bombs (not a report: ignored).
  // The baseline then includes the reader thread and what reading any 2 MB message costs once (heap
  // pages for its strings: ~25 MB, kept by V8 for the next message); what follows is the bombs' own.
  const honest = await deliver('outlook.xml.gz', readFileSync(HONEST_GZIP));
  assert.match(honest.output, /250 Accepted: dmarc \(1\)/, honest.output);
  const benign = await deliver('scan.pdf', randomBytes(deflated.length));
  assert.match(benign.output, /250 Accepted: dmarc\r?\n/, benign.output);
  const before = await metrics();
  assert.ok(before.value('svc_event_loop_delay_seconds_count')! >= 0);

  // /health/ready polled throughout, as a load balancer would.
  const readiness = pollReadiness(daemon.url);
  const probes = readiness.probes;
  // The machine's own noise first: the same polling, no bomb (a busy CI host delays every loop).
  await waitFor('20 readiness probes without bombs', () => probes.length >= 20, { timeoutMs: 30_000, intervalMs: 50 });
  const idle = await metrics();
  const idleMaxMs = longestMs(before, idle);
  const rss = (exposition: Exposition) => exposition.value('process_resident_memory_bytes')!;
  const idleRssGrowthMb = (rss(idle) - rss(before)) / MIB;

  const bombs: { name: string; content: Buffer; reason: RegExp }[] = [
    {
      name: 'lying.zip',
      content: zipArchive([
        { name: 'report.xml', content: Buffer.alloc(0), data: deflated, claimedSize: 1000, crc: 0 },
      ]),
      reason:
        /zip entry \\"report\.xml\\" inflates more than 200 times its compressed size \(its header claims 1000 bytes\): a decompression bomb/,
    },
    {
      name: 'lying.xml.gz',
      content: gzipMember(deflated, 0, 1000),
      reason:
        /the gzip report inflates more than 200 times its compressed size \(its header claims 1000 bytes\): a decompression bomb/,
    },
    {
      name: 'lying-dense.xml.gz',
      content: gzipMember(denseXml(), 0, 1000),
      reason: /the gzip report inflates past the 20971520-byte limit \(its header claims 1000 bytes\)/,
    },
    {
      name: 'crowded.zip',
      content: zipArchive(
        Array.from({ length: 10_000 }, (_, i) => ({ name: `r${i}.xml`, content: Buffer.from('<a/>'), stored: true })),
      ),
      reason: /the zip has 10000 entries; a report has one \(at most 5 accepted\)/,
    },
    {
      name: 'nested.zip',
      content: zipArchive([{ name: 'report.zip', content: honestZip, stored: true }]),
      reason: /zip entry \\"report\.zip\\" is itself an archive: nested archives are refused/,
    },
    {
      name: 'disguised.zip',
      content: zipArchive([{ name: 'report.xml', content: gzipSync(XML) }]),
      reason: /zip entry \\"report\.xml\\" is itself an archive: nested archives are refused/,
    },
    {
      name: 'truncated.zip',
      content: honestZip.subarray(0, Math.floor(honestZip.length / 2)),
      reason: /the zip is truncated: it has no end-of-central-directory record/,
    },
    {
      name: 'wrong-crc.xml.gz',
      content: wrongCrc,
      reason: /the gzip report fails its CRC check: corrupt/,
    },
  ];
  const delays: string[] = [];
  try {
    for (const bomb of bombs) {
      // A stall of ours happens on every delivery; a busy host's scheduling does not: best of three.
      let delayMs = Infinity;
      for (let attempt = 0; attempt < 3 && delayMs >= 100; attempt++) {
        const seen = daemon.output().length;
        const start = await metrics();
        const run = await deliver(bomb.name, bomb.content);
        assert.is(run.code, 0, run.output);
        // Accepted (the reporter did nothing we could ask it to fix), stored nothing: no "(n)".
        assert.match(run.output, /250 Accepted: dmarc\r?\n/, `${bomb.name}: ${run.output.slice(-400)}`);
        await waitFor(`the log line refusing ${bomb.name}`, () => bomb.reason.test(daemon.output().slice(seen)), {
          timeoutMs: 10_000,
          intervalMs: 50,
        });
        const line = daemon
          .output()
          .slice(seen)
          .split('\n')
          .find((l) => bomb.reason.test(l))!;
        assert.match(line, /DMARC report dropped: unreadable/);
        assert.match(line, new RegExp(`"filename":"${bomb.name.replace(/\./g, '\\.')}"`));
        // The histogram's observations between the two scrapes: the delay while this bomb was handled.
        delayMs = Math.min(delayMs, longestMs(start, await metrics()));
      }
      delays.push(`${bomb.name} ${delayMs.toFixed(0)} ms`);
    }
  } finally {
    await readiness.stop();
  }

  const after = await metrics();
  const maxDelayMs = Math.max(...delays.map((entry) => Number(/ (\d+) ms$/.exec(entry)![1])));
  const rssGrowthMb = (rss(after) - rss(before)) / MIB;
  const slowestProbeMs = Math.max(...probes.map((probe) => probe.ms));
  console.log(
    `    event-loop max per bomb: ${delays.join(', ')} (idle ${idleMaxMs.toFixed(0)} ms); ` +
      `RSS growth while idle ${idleRssGrowthMb.toFixed(1)} MB; ` +
      `RSS growth ${rssGrowthMb.toFixed(1)} MB; ${probes.length} readiness probes, slowest ${slowestProbeMs.toFixed(0)} ms`,
  );
  // Under 100 ms; on a host so busy that the idle loop already waits longer, no worse than idle + 50 ms.
  // (The synchronous inflation this replaces held the loop for 0.1–4.6 s per attachment.) The delays are
  // bucket bounds of the histogram ("at most"), and 100 ms is one: "≤ 100" reads as "< 100" did before.
  assert.ok(
    maxDelayMs <= Math.max(100, idleMaxMs + 50),
    `event-loop max delay ≤ ${maxDelayMs} ms (idle ≤ ${idleMaxMs} ms)`,
  );
  assert.ok(rssGrowthMb < 50, `RSS grew by ${rssGrowthMb} MB`);
  assert.ok(probes.length >= 5, `${probes.length} probes`);
  assert.equal(
    probes.filter((probe) => probe.status !== 200),
    [],
  );
  assert.ok(slowestProbeMs < 1000, `slowest readiness probe ${slowestProbeMs} ms`);

  assert.is(await stopChildDaemon(daemon), 0);
  const db = await openWorldDatabase(world);
  try {
    const reports = await db.sequelize.query<{ org_name: string; report_id: string }>(
      `SELECT org_name, report_id FROM dmarc_reports ORDER BY report_id`,
      { type: QueryTypes.SELECT },
    );
    // Only the honest report: none of the bombs left a row.
    assert.equal(
      reports.map((r) => r.org_name),
      ['Enterprise Outlook'],
    );
  } finally {
    await db.close();
  }
});

test.run();
