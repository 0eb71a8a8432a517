// Human output: aligned tables, status colours, short dates. --json never passes through here.
import chalk from 'chalk';

export interface Column<T> {
  header: string;
  value: (row: T) => string;
}

const ANSI = /\u001b\[[0-9;]*m/g;
const visibleLength = (text: string) => text.replace(ANSI, '').length;

export function table<T>(rows: T[], columns: Column<T>[], empty = 'Nothing to show.'): string {
  if (rows.length === 0) return chalk.dim(empty);
  const cells = rows.map((row) => columns.map((column) => column.value(row)));
  const widths = columns.map((column, index) =>
    Math.max(column.header.length, ...cells.map((line) => visibleLength(line[index]))),
  );
  const pad = (text: string, width: number) => text + ' '.repeat(Math.max(0, width - visibleLength(text)));
  const last = columns.length - 1;
  const header = columns
    .map((column, index) => chalk.bold(index === last ? column.header : pad(column.header, widths[index])))
    .join('  ');
  return [
    header,
    ...cells.map((line) => line.map((cell, index) => (index === last ? cell : pad(cell, widths[index]))).join('  ')),
  ].join('\n');
}

const STATUS_COLOURS: Record<string, (text: string) => string> = {
  QUEUED: chalk.cyan,
  SENDING: chalk.blue,
  SENT: chalk.green,
  DELIVERED: chalk.greenBright,
  BOUNCED: chalk.red,
  COMPLAINED: chalk.magenta,
  FAILED: chalk.redBright,
  SUPPRESSED: chalk.yellow,
  PENDING: chalk.cyan,
  CANCELLED: chalk.dim,
};

export function colourStatus(status: string): string {
  return (STATUS_COLOURS[status] ?? ((text: string) => text))(status);
}

export function shortDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toISOString().replace('T', ' ').slice(0, 19);
}

export function recipients(to: string | string[] | undefined): string {
  if (to === undefined) return '';
  return Array.isArray(to) ? to.join(', ') : to;
}

export function pageLine(
  meta: { page: number; totalPages: number; total: number; totalIsEstimate?: boolean } | undefined,
): string {
  const about = meta?.totalIsEstimate ? 'about ' : '';
  return meta
    ? chalk.dim(`page ${meta.page} of ${about}${Math.max(1, meta.totalPages)} · ${about}${meta.total} in all`)
    : '';
}

export function keyValue(pairs: [string, string | null | undefined][]): string {
  const width = Math.max(...pairs.map(([key]) => key.length));
  return pairs.map(([key, value]) => `${chalk.dim(key.padEnd(width))}  ${value ?? '—'}`).join('\n');
}
