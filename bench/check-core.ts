// The logic of `npm run bench:check` (bench/check.ts): the kept ratios' file (one set per machine), the
// comparison of a run's ratios against them, and the table. No bench runs here (test/bench-check.test.ts tests this file).
//
// A ratio is svc's figure over a baseline measured in the same run through the same path, written so
// that higher is better (a rate over a rate; for a time, the baseline's time over svc's). A ratio more
// than TOLERANCE below its kept value fails the check; one that is missing from the run fails it too
// (a bench that stopped reporting it must not pass silently); one the kept file does not have yet is
// shown as new and passes (`--update` keeps it).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/** A ratio may fall this much below its kept value (20 %) before the check fails. */
export const TOLERANCE = 0.2;

export interface KeptRatio {
  value: number;
  /** What it divides by what, in words. */
  what: string;
}

export interface KeptFile {
  /** ISO date of the run the values come from. */
  measuredAt: string;
  /** The machine it ran on (bench/machine.ts' line) and its load average at the start. */
  machine: Record<string, unknown>;
  tolerance: number;
  ratios: Record<string, KeptRatio>;
}

/** One ratio of this run: `bench.name` → value and what it is. */
export type RunRatios = Record<string, KeptRatio>;

export type Verdict = 'ok' | 'FAIL' | 'new' | 'missing';

export interface CheckRow {
  name: string;
  what: string;
  kept: number | null;
  now: number | null;
  /** now / kept − 1 (−0.25: a quarter below), null when either is missing. */
  change: number | null;
  verdict: Verdict;
}

/**
 * The machine a kept set of ratios belongs to: its CPU model and core count. A ratio is svc over a baseline
 * on the same box, but not every box weighs the two alike (on the 2-core Intel Xeon VM the bulk import's
 * baseline runs twice as fast as on the AMD EPYC one while the API path does not: lists.bulk 0.52–0.55
 * against 0.75, for the code of one commit), so each machine keeps its own and a run compares with its own.
 */
export function machineKey(machine: Record<string, unknown>): string {
  return `${String(machine.cpuModel ?? 'unknown CPU')} × ${String(machine.nproc ?? '?')}`;
}

function checkedKept(where: string, parsed: Partial<KeptFile>): KeptFile {
  if (typeof parsed !== 'object' || parsed === null || typeof parsed.ratios !== 'object' || parsed.ratios === null)
    throw new Error(`${where}: not a bench:check file (no "ratios" object)`);
  for (const [name, ratio] of Object.entries(parsed.ratios)) {
    if (typeof ratio?.value !== 'number' || !Number.isFinite(ratio.value) || ratio.value <= 0)
      throw new Error(`${where}: ratio "${name}" has no positive number as its value`);
  }
  return {
    measuredAt: String(parsed.measuredAt ?? ''),
    machine: parsed.machine ?? {},
    tolerance: typeof parsed.tolerance === 'number' ? parsed.tolerance : TOLERANCE,
    ratios: parsed.ratios as Record<string, KeptRatio>,
  };
}

/** Every machine's kept ratios, by machineKey (a file of one machine's, the older form, is read as that). */
export function readKeptMachines(path: string): Record<string, KeptFile> {
  const parsed = JSON.parse(readFileSync(path, 'utf8')) as { machines?: Record<string, Partial<KeptFile>> };
  if (typeof parsed === 'object' && parsed !== null && typeof parsed.machines === 'object' && parsed.machines) {
    return Object.fromEntries(
      Object.entries(parsed.machines).map(([key, kept]) => [key, checkedKept(`${path} (${key})`, kept)]),
    );
  }
  const single = checkedKept(path, parsed as Partial<KeptFile>);
  return { [machineKey(single.machine)]: single };
}

/** This machine's kept ratios, or null when none were kept on a machine like it. */
export function readKept(path: string, key: string): KeptFile | null {
  return readKeptMachines(path)[key] ?? null;
}

/** Writes this machine's kept ratios beside the other machines'. */
export function writeKept(path: string, key: string, file: KeptFile): void {
  const machines = existsSync(path) ? readKeptMachines(path) : {};
  const sortedRatios = Object.fromEntries(Object.entries(file.ratios).sort(([a], [b]) => a.localeCompare(b)));
  machines[key] = { ...file, ratios: sortedRatios };
  const sorted = Object.fromEntries(Object.entries(machines).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(path, JSON.stringify({ machines: sorted }, null, 2) + '\n');
}

/** Each kept ratio against this run's, then the ratios only this run has. */
export function compareRatios(kept: KeptFile, run: RunRatios, only: Set<string> | null = null): CheckRow[] {
  const rows: CheckRow[] = [];
  const benchOf = (name: string) => name.split('.')[0];
  for (const [name, keptRatio] of Object.entries(kept.ratios)) {
    // A check of some benches only (--only) leaves the others' kept ratios out.
    if (only && !only.has(benchOf(name))) continue;
    const now = run[name];
    if (!now) {
      rows.push({ name, what: keptRatio.what, kept: keptRatio.value, now: null, change: null, verdict: 'missing' });
      continue;
    }
    const change = now.value / keptRatio.value - 1;
    rows.push({
      name,
      what: keptRatio.what,
      kept: keptRatio.value,
      now: now.value,
      change,
      verdict: change < -kept.tolerance ? 'FAIL' : 'ok',
    });
  }
  for (const [name, ratio] of Object.entries(run)) {
    if (name in kept.ratios) continue;
    rows.push({ name, what: ratio.what, kept: null, now: ratio.value, change: null, verdict: 'new' });
  }
  return rows;
}

export const failed = (rows: CheckRow[]) => rows.filter((row) => row.verdict === 'FAIL' || row.verdict === 'missing');

/**
 * Each ratio's median over several runs of the same benches (`--repeat N`). One short run of a bench that
 * uses both cores (the drain's signing threads, the MTA) swings by ±15 % with whatever else the machine
 * does for a minute; the median of three is what a gate can be compared with, and what `--update` keeps.
 * A ratio some runs did not report takes the median of those that did (the check then still fails it
 * when none did: it is missing from the result).
 */
export function medianRatios(runs: RunRatios[]): RunRatios {
  const names = [...new Set(runs.flatMap((run) => Object.keys(run)))];
  const out: RunRatios = {};
  for (const name of names) {
    const reported = runs.map((run) => run[name]).filter((ratio): ratio is KeptRatio => ratio !== undefined);
    const values = reported.map((ratio) => ratio.value).sort((a, b) => a - b);
    const middle = values.length >> 1;
    const median = values.length % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
    out[name] = { value: Math.round(median * 10_000) / 10_000, what: reported[0].what };
  }
  return out;
}

/** The kept file after `--update`: this run's ratios over the kept ones (benches not run keep theirs). */
export function updatedKept(kept: KeptFile | null, run: RunRatios, machine: Record<string, unknown>): KeptFile {
  return {
    measuredAt: new Date().toISOString(),
    machine,
    tolerance: kept?.tolerance ?? TOLERANCE,
    ratios: { ...(kept?.ratios ?? {}), ...run },
  };
}

const figure = (value: number | null) => (value === null ? '—' : value.toFixed(3));
const percent = (value: number | null) =>
  value === null ? '—' : `${value >= 0 ? '+' : ''}${(value * 100).toFixed(1)} %`;

/** A plain-text table, one ratio a line. */
export function formatTable(rows: CheckRow[]): string {
  const lines = [
    ['ratio', 'kept', 'now', 'change', 'verdict', 'what'],
    ...rows.map((row) => [row.name, figure(row.kept), figure(row.now), percent(row.change), row.verdict, row.what]),
  ];
  const widths = lines[0].map((_, column) => Math.max(...lines.map((line) => line[column].length)));
  return lines
    .map((line) =>
      line.map((cell, column) => (column === line.length - 1 ? cell : cell.padEnd(widths[column]))).join('  '),
    )
    .join('\n');
}

/** a / b rounded to 4 digits; null when either is missing or b is not positive. */
export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  if (typeof a !== 'number' || typeof b !== 'number' || !Number.isFinite(a) || !Number.isFinite(b) || b <= 0)
    return null;
  return Math.round((a / b) * 10_000) / 10_000;
}
