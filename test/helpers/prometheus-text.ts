// A strict reader of Prometheus's text exposition format (0.0.4): it throws on anything a Prometheus
// server would refuse or misread — a malformed line, a sample before its TYPE or of another family, a
// family split in two, a series twice, a negative counter, a histogram whose buckets are not
// cumulative or whose +Inf bucket is not its count. prom-client ships no parser; this is the check.
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  /** Family name → its TYPE. */
  types: Map<string, string>;
  /** The value of the series `name` whose labels include `labels`, or undefined. */
  value(name: string, labels?: Record<string, string>): number | undefined;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseValue(raw: string, line: string): number {
  if (raw === '+Inf') return Infinity;
  if (raw === '-Inf') return -Infinity;
  if (raw === 'NaN') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(raw)) throw new Error(`not a number "${raw}": ${line}`);
  return Number(raw);
}

/** `name{a="x",b="y"} value [timestamp]` */
function parseSample(line: string): Sample {
  const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0];
  if (!name) throw new Error(`no metric name: ${line}`);
  let rest = line.slice(name.length);
  const labels: Record<string, string> = {};
  if (rest.startsWith('{')) {
    rest = rest.slice(1);
    while (!rest.startsWith('}')) {
      const label = /^([^=]+)="((?:[^"\\]|\\\\|\\"|\\n)*)"/.exec(rest);
      if (!label || !LABEL.test(label[1])) throw new Error(`bad label: ${line}`);
      if (label[1] in labels) throw new Error(`label ${label[1]} twice: ${line}`);
      labels[label[1]] = label[2].replace(/\\(["\\n])/g, (_m, c: string) => (c === 'n' ? '\n' : c));
      rest = rest.slice(label[0].length);
      if (rest.startsWith(',')) rest = rest.slice(1);
      else if (!rest.startsWith('}')) throw new Error(`bad label list: ${line}`);
    }
    rest = rest.slice(1);
  }
  const parts = rest.split(' ');
  if (parts[0] !== '' || parts.length < 2 || parts.length > 3) throw new Error(`bad sample: ${line}`);
  if (parts[2] !== undefined && !/^-?\d+$/.test(parts[2])) throw new Error(`bad timestamp: ${line}`);
  return { name, labels, value: parseValue(parts[1], line) };
}

function familyOf(name: string, types: Map<string, string>): string | null {
  if (types.has(name)) return name;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    const base = name.endsWith(suffix) ? name.slice(0, -suffix.length) : null;
    const type = base ? types.get(base) : undefined;
    if (base && (type === 'histogram' || (type === 'summary' && suffix !== '_bucket'))) return base;
  }
  return null;
}

const seriesKey = (name: string, labels: Record<string, string>) =>
  `${name}{${Object.keys(labels)
    .sort()
    .map((key) => `${key}=${labels[key]}`)
    .join(',')}}`;

function checkHistograms(samples: Sample[], types: Map<string, string>): void {
  for (const [family, type] of types) {
    if (type !== 'histogram') continue;
    const groups = new Map<string, { buckets: Array<[number, number]>; count?: number }>();
    for (const sample of samples) {
      if (![`${family}_bucket`, `${family}_sum`, `${family}_count`].includes(sample.name)) continue;
      const { le, ...rest } = sample.labels;
      const key = seriesKey(family, rest);
      const group = groups.get(key) ?? { buckets: [] };
      groups.set(key, group);
      if (sample.name === `${family}_bucket`) {
        if (le === undefined) throw new Error(`${family}_bucket without le`);
        group.buckets.push([parseValue(le, le), sample.value]);
      } else if (sample.name === `${family}_count`) group.count = sample.value;
    }
    for (const [key, group] of groups) {
      const bounds = group.buckets.map(([bound]) => bound);
      if (bounds.at(-1) !== Infinity) throw new Error(`${key}: no +Inf bucket`);
      for (let i = 1; i < group.buckets.length; i++) {
        if (!(bounds[i] > bounds[i - 1])) throw new Error(`${key}: buckets out of order`);
        if (group.buckets[i][1] < group.buckets[i - 1][1]) throw new Error(`${key}: buckets not cumulative`);
      }
      if (group.count !== group.buckets.at(-1)![1]) throw new Error(`${key}: +Inf bucket differs from _count`);
    }
  }
}

export function parsePrometheusText(text: string): Exposition {
  if (!text.endsWith('\n')) throw new Error('the exposition does not end with a newline');
  const types = new Map<string, string>();
  const helps = new Set<string>();
  const samples: Sample[] = [];
  const seen = new Set<string>();
  const closed = new Set<string>();
  let current: string | null = null;
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const meta = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
      if (!meta) continue;
      const [, kind, name, rest] = meta;
      if (!NAME.test(name)) throw new Error(`bad metric name: ${line}`);
      if (kind === 'HELP') {
        if (helps.has(name)) throw new Error(`HELP twice for ${name}`);
        helps.add(name);
      } else {
        if (!TYPES.has(rest)) throw new Error(`unknown type: ${line}`);
        if (types.has(name)) throw new Error(`TYPE twice for ${name}`);
        types.set(name, rest);
      }
      if (current !== name && current !== null) closed.add(current);
      if (closed.has(name)) throw new Error(`family ${name} is split`);
      current = name;
      continue;
    }
    const sample = parseSample(line);
    const family = familyOf(sample.name, types);
    if (!family) throw new Error(`sample of no declared family: ${line}`);
    if (family !== current) throw new Error(`sample outside its family's block: ${line}`);
    const key = seriesKey(sample.name, sample.labels);
    if (seen.has(key)) throw new Error(`series twice: ${line}`);
    seen.add(key);
    if (types.get(family) === 'counter' && !(sample.value >= 0)) throw new Error(`negative counter: ${line}`);
    samples.push(sample);
  }
  checkHistograms(samples, types);
  return {
    samples,
    types,
    value(name, labels = {}) {
      return samples.find(
        (sample) =>
          sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
      )?.value;
    },
  };
}

/**
 * The longest delay a histogram saw between two scrapes, as the smallest bucket bound that holds
 * every observation made in between (Infinity: one was above the last bound; 0: none was made).
 */
export function longestBetween(before: Exposition, after: Exposition, family: string): number {
  const buckets = (exposition: Exposition) =>
    new Map(
      exposition.samples
        .filter((sample) => sample.name === `${family}_bucket`)
        .map((sample) => [parseValue(sample.labels.le, sample.labels.le), sample.value]),
    );
  const early = buckets(before);
  const late = buckets(after);
  const total = (late.get(Infinity) ?? 0) - (early.get(Infinity) ?? 0);
  if (total === 0) return 0;
  const bounds = [...late.keys()].sort((a, b) => a - b);
  return bounds.find((bound) => (late.get(bound) ?? 0) - (early.get(bound) ?? 0) === total) ?? Infinity;
}
