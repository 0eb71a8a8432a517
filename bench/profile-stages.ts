// CPU per message split by stage, from the CPU profiles `BENCH_CPU_PROF=1 npm run bench:mta` writes
// (bench/profiles/, one file per process or thread): the table of docs/smtp.md "Performance".
//
//   node --import tsx bench/profile-stages.ts --messages N [--cpu-ms M] <file.cpuprofile>...
//
// N is every message the profiled processes handled (the warm-up's included). The profiler samples on
// the wall clock: on a loaded machine a process waiting for a core is sampled too, in what it was
// doing. --cpu-ms M scales the stages to M ms per message in all (the CPU the bench read from /proc
// for these processes, its cpuMsPerMessage), keeping their shares. Each sample goes to the
// stage of the deepest frame of its stack that belongs to one (a Buffer.concat called by the MIME
// parser is parsing); samples in none are "runtime". The daemon runs its build (.build/): esbuild
// bundles whose `// path` comments say which source each line came from. Module loading (boot)
// and idle time are left out.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
}

/** Stages in the order of a message's way; the first rule that matches a frame's source names it. */
const STAGES: [stage: string, source: RegExp][] = [
  [
    'TLS (handshake, record layer)',
    /^node:(_tls_wrap|tls|internal\/tls)|^node:internal\/crypto\/(keygen|diffiehellman)/,
  ],
  ['SMTP session (commands, DATA stream)', /node_modules\/smtp-server\//],
  [
    'message parse (MIME → send)',
    /node_modules\/(mailparser|@zone-eu\/mailsplit|libqp|libmime|libbase64|iconv-lite|encoding-japanese|punycode)|addressparser|daemon\/smtp\/submission-(message|body)/,
  ],
  [
    'validation (normalizeSend)',
    /daemon\/modules\/emails\/validate|daemon\/db\/storable-text|daemon\/mail\/(addresses|mailboxes)/,
  ],
  ['key and tenant checks', /daemon\/modules\/(auth|tenants)\/|daemon\/smtp\/submission\.ts/],
  ["service's headers on the submitted message", /daemon\/smtp\/submission-spool/],
  [
    'compose (MIME build)',
    /daemon\/mail\/(compose|encoded-parts|quoted-printable|serialize-message|line-ends|buffer-transport|tracking|link-tokens)/,
  ],
  [
    'DKIM (body hash, RSA signature)',
    /daemon\/mail\/(dkim|sign-built-message)|node:internal\/crypto\/(sig|hash)|dkim-signer|relaxed-body/,
  ],
  [
    'durable write (accept, spool insert)',
    /node_modules\/(pg|pg-protocol|pg-pool)\/|daemon\/db\/|daemon\/modules\/emails\/|daemon\/mta\/sql\/|daemon\/mta\/spooled/,
  ],
  ['queue hand-over (claim, jobs)', /daemon\/(queue|jobs)\//],
  ['MTA delivery (SMTP client)', /daemon\/mta\/|node_modules\/nodemailer\//],
  ['logging', /node_modules\/pino/],
];
const RUNTIME = 'runtime (streams, buffers, promises, GC)';
const SKIPPED = new Set(['(idle)', '(root)']);

/** For a bundle: the `// path` comment lines esbuild writes before each module, by line. */
function bundleIndex(path: string): { line: number; source: string }[] {
  const index: { line: number; source: string }[] = [];
  readFileSync(path, 'utf8')
    .split('\n')
    .forEach((text, line) => {
      const match = /^\/\/ ((?:node_modules|daemon|shared)\/\S+)$/.exec(text);
      if (match) index.push({ line, source: match[1] });
    });
  return index;
}

const indexes = new Map<string, { line: number; source: string }[]>();
function sourceOf(frame: CallFrame): string {
  if (!frame.url.startsWith('file://')) return frame.url;
  const path = fileURLToPath(frame.url);
  if (!path.includes('/.build/')) return path;
  let index = indexes.get(path);
  if (!index) indexes.set(path, (index = bundleIndex(path)));
  // The last module that starts at or before the frame's line.
  let low = 0;
  let high = index.length - 1;
  // An unbundled file of the build: its own path stands for its source.
  let found = path.replace(/^.*\/\.build\/[^/]+\//, '');
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (index[middle].line <= frame.lineNumber) {
      found = index[middle].source;
      low = middle + 1;
    } else high = middle - 1;
  }
  return found;
}

function stageOfFrame(frame: CallFrame): string | null {
  if (frame.functionName === '(garbage collector)') return 'GC';
  if (frame.functionName === '(program)') return 'native (program)';
  const source = sourceOf(frame);
  if (/^node:internal\/modules|esbuild/.test(source)) return 'boot';
  for (const [stage, pattern] of STAGES) if (pattern.test(source)) return stage;
  return null;
}

/** Milliseconds of CPU per stage in one profile. */
function stagesOf(profile: Profile): Map<string, number> {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const stageById = new Map<number, string>();
  const totals = new Map<string, number>();
  const walk = (id: number, inherited: string) => {
    const node = byId.get(id)!;
    const own = stageOfFrame(node.callFrame);
    // boot wins over what it calls; otherwise the deepest stage.
    const stage = inherited === 'boot' ? 'boot' : (own ?? inherited);
    stageById.set(id, SKIPPED.has(node.callFrame.functionName) ? 'idle' : stage);
    for (const child of node.children ?? []) walk(child, stage);
  };
  walk(profile.nodes[0].id, RUNTIME);
  const interval = (profile.endTime - profile.startTime) / 1000 / profile.samples.length;
  for (const id of profile.samples) {
    const stage = stageById.get(id)!;
    totals.set(stage, (totals.get(stage) ?? 0) + interval);
  }
  return totals;
}

const { values, positionals } = parseArgs({
  options: { messages: { type: 'string' }, 'cpu-ms': { type: 'string' } },
  allowPositionals: true,
});
const messages = Number(values.messages);
if (!Number.isInteger(messages) || messages < 1 || positionals.length === 0) {
  console.error('usage: node --import tsx bench/profile-stages.ts --messages N [--cpu-ms M] <file.cpuprofile>...');
  process.exit(2);
}
const totals = new Map<string, number>();
for (const file of positionals) {
  for (const [stage, ms] of stagesOf(JSON.parse(readFileSync(file, 'utf8')) as Profile))
    totals.set(stage, (totals.get(stage) ?? 0) + ms);
}
totals.delete('idle');
totals.delete('boot');
const order = [...STAGES.map(([stage]) => stage), RUNTIME, 'native (program)', 'GC'];
const sampled = [...totals.values()].reduce((a, b) => a + b, 0);
const scale = values['cpu-ms'] ? (Number(values['cpu-ms']) * messages) / sampled : 1;
for (const [stage, ms] of totals) totals.set(stage, ms * scale);
const sum = sampled * scale;
console.log('| stage | CPU ms per message | share |');
console.log('|---|---|---|');
for (const stage of order) {
  const ms = totals.get(stage);
  if (!ms) continue;
  console.log(`| ${stage} | ${(ms / messages).toFixed(2)} | ${Math.round((ms / sum) * 100)} % |`);
}
console.log(`| **total** | **${(sum / messages).toFixed(2)}** | |`);
