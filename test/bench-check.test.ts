// npm run bench:check's logic (bench/check-core.ts): the kept file's format, each ratio of a run against
// its kept value (more than 20 % below fails, a kept ratio the run no longer reports fails, a new one
// passes), the kept file's sets per machine and --update's, --repeat's median, the table. No bench runs here.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  compareRatios,
  failed,
  formatTable,
  machineKey,
  medianRatios,
  ratio,
  readKept,
  readKeptMachines,
  updatedKept,
  writeKept,
  type KeptFile,
} from '../bench/check-core.ts';

const kept: KeptFile = {
  measuredAt: '2026-11-28T05:00:00.000Z',
  machine: { nproc: 2, loadAverageAtStart: [0.4, 0.5, 0.6] },
  tolerance: 0.2,
  ratios: {
    'lists.bulk': { value: 0.8, what: 'bulk ÷ Fastify + INSERT' },
    'accept.rate': { value: 1.0, what: 'accept ÷ Fastify + INSERT' },
    'drain.signed': { value: 2.0, what: 'drain ÷ nodemailer' },
  },
};

test('a ratio more than 20 % below its kept value fails; 20 % below or better passes', () => {
  const rows = compareRatios(kept, {
    'lists.bulk': { value: 0.08, what: '' }, // the issue 51 regression: a tenth of the kept value
    'accept.rate': { value: 0.8, what: '' }, // exactly 20 % below
    'drain.signed': { value: 2.5, what: '' },
  });
  assert.equal(
    rows.map((row) => [row.name, row.verdict]),
    [
      ['lists.bulk', 'FAIL'],
      ['accept.rate', 'ok'],
      ['drain.signed', 'ok'],
    ],
  );
  assert.equal(Math.round(rows[0].change! * 100), -90);
  assert.equal(
    failed(rows).map((row) => row.name),
    ['lists.bulk'],
  );
  assert.equal(failed(compareRatios(kept, { 'lists.bulk': { value: 0.79, what: '' } }, new Set(['lists']))), []);
  assert.equal(failed(compareRatios(kept, { 'lists.bulk': { value: 0.63, what: '' } }, new Set(['lists']))).length, 1);
});

test('a kept ratio the run does not report fails; one only the run has is new; --only leaves the others out', () => {
  const rows = compareRatios(
    kept,
    { 'lists.bulk': { value: 0.8, what: 'x' }, 'lists.csv': { value: 0.5, what: 'y' } },
    new Set(['lists', 'accept']),
  );
  assert.equal(
    rows.map((row) => [row.name, row.verdict, row.kept, row.now]),
    [
      ['lists.bulk', 'ok', 0.8, 0.8],
      ['accept.rate', 'missing', 1, null],
      ['lists.csv', 'new', null, 0.5],
    ],
  );
  assert.equal(
    failed(rows).map((row) => row.name),
    ['accept.rate'],
  );
});

test('the kept file: one set per machine, written sorted with date, machine and tolerance; --update keeps benches not run', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-check-'));
  try {
    const path = join(dir, 'check-baseline.json');
    // The older form, one machine's ratios at the top, is read as that machine's.
    writeFileSync(path, JSON.stringify({ ...kept, machine: { cpuModel: 'AMD EPYC', nproc: 2 } }));
    assert.equal(Object.keys(readKeptMachines(path)), ['AMD EPYC × 2']);
    assert.equal(readKept(path, 'AMD EPYC × 2')!.ratios, kept.ratios);
    assert.is(readKept(path, 'Intel(R) Xeon(R) Processor × 2'), null); // another machine has none yet

    const intel = { cpuModel: 'Intel(R) Xeon(R) Processor', nproc: 2 };
    assert.is(machineKey(intel), 'Intel(R) Xeon(R) Processor × 2');
    const next = updatedKept(null, { 'lists.bulk': { value: 0.5, what: 'bulk' } }, intel);
    writeKept(path, machineKey(intel), next);
    const raw = JSON.parse(readFileSync(path, 'utf8'));
    assert.equal(Object.keys(raw), ['machines']);
    assert.equal(Object.keys(raw.machines), ['AMD EPYC × 2', 'Intel(R) Xeon(R) Processor × 2']);
    assert.equal(raw.machines['AMD EPYC × 2'].ratios['lists.bulk'], { value: 0.8, what: 'bulk ÷ Fastify + INSERT' });
    const mine = raw.machines['Intel(R) Xeon(R) Processor × 2'];
    assert.equal(Object.keys(mine), ['measuredAt', 'machine', 'tolerance', 'ratios']);
    assert.equal(mine.ratios, { 'lists.bulk': { value: 0.5, what: 'bulk' } });
    assert.equal(mine.machine, intel);
    assert.ok(!Number.isNaN(Date.parse(mine.measuredAt)));

    // --update of some benches keeps this machine's others, sorted by name.
    writeKept(
      path,
      'AMD EPYC × 2',
      updatedKept(readKept(path, 'AMD EPYC × 2'), { 'lists.bulk': { value: 0.9, what: 'bulk' } }, { nproc: 2 }),
    );
    const amd = readKept(path, 'AMD EPYC × 2')!;
    assert.equal(Object.keys(amd.ratios), ['accept.rate', 'drain.signed', 'lists.bulk']);
    assert.equal(amd.ratios['lists.bulk'], { value: 0.9, what: 'bulk' });
    assert.equal(amd.ratios['drain.signed'], { value: 2, what: 'drain ÷ nodemailer' });
    assert.equal(readKept(path, machineKey(intel))!.ratios, mine.ratios);

    writeFileSync(path, JSON.stringify({ measuredAt: 'x', ratios: { 'a.b': { value: 0, what: '' } } }));
    assert.throws(() => readKept(path, 'x'), /ratio "a\.b" has no positive number/);
    writeFileSync(path, JSON.stringify({ machines: { m: { figures: {} } } }));
    assert.throws(() => readKept(path, 'm'), /\(m\): not a bench:check file/);
    writeFileSync(path, JSON.stringify({ figures: {} }));
    assert.throws(() => readKept(path, 'x'), /not a bench:check file/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('ratio: rounded to four digits, null when a figure is missing or the divisor is not positive', () => {
  assert.is(ratio(2779, 2427), 1.145);
  assert.is(ratio(undefined, 10), null);
  assert.is(ratio(5, 0), null);
  assert.is(ratio(null, 3), null);
});

test('--repeat: each ratio is the median of the runs that reported it, rounded to four digits', () => {
  const median = medianRatios([
    { 'drain.signed': { value: 2.6, what: 'drain ÷ nodemailer' }, 'lists.bulk': { value: 0.8, what: 'bulk' } },
    { 'drain.signed': { value: 1.7, what: 'drain ÷ nodemailer' }, 'lists.bulk': { value: 0.7, what: 'bulk' } },
    { 'drain.signed': { value: 1.9, what: 'drain ÷ nodemailer' } },
  ]);
  assert.equal(median, {
    'drain.signed': { value: 1.9, what: 'drain ÷ nodemailer' }, // the high outlier does not become the gate
    'lists.bulk': { value: 0.75, what: 'bulk' }, // two runs reported it: the mean of the middle two
  });
  assert.equal(medianRatios([{ 'a.b': { value: 1 / 3, what: '' } }]), { 'a.b': { value: 0.3333, what: '' } });
  assert.equal(medianRatios([]), {});
  // A median the kept file would fail is still a FAIL: the median only steadies the figure.
  assert.equal(failed(compareRatios(kept, median, new Set(['drain']))), []);
  assert.equal(
    failed(compareRatios(kept, medianRatios([{ 'drain.signed': { value: 1.5, what: '' } }]), new Set(['drain'])))
      .length,
    1,
  );
});

test('the table names each ratio with kept, now, change and verdict', () => {
  const table = formatTable(
    compareRatios(kept, { 'lists.bulk': { value: 0.4, what: 'bulk ÷ Fastify + INSERT' } }, new Set(['lists'])),
  );
  const [header, line] = table.split('\n');
  assert.match(header, /^ratio\s+kept\s+now\s+change\s+verdict\s+what$/);
  assert.match(line, /^lists\.bulk\s+0\.800\s+0\.400\s+-50\.0 %\s+FAIL\s+bulk ÷ Fastify \+ INSERT$/);
});

test.run();
