import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { colourStatus, recipients, shortDate } from '../../format.ts';
import { EMAIL_STATUSES } from '../../../shared/constants.ts';
import { followLogs, type LogEntry } from '../../services/log-feed.ts';
import { renderLogTail } from '../../ui/render.ts';
import { followLines } from '../../services/follow-lines.ts';

export default class LogsTail extends SvcCommand<typeof LogsTail> {
  static override operations = ['getEmailsLogsStream', 'getEmailsLogs', 'getEmailsLogsById'];
  static override summary = 'Follow sends as they happen.';
  static override description =
    'In a terminal: a live view with status colours; p pauses, s cycles the status filter, / filters by recipient, ' +
    '↑/↓ and Enter open one email, q quits. Without a terminal (or with --plain): one line per change, or with ' +
    '--json one JSON object per line (NDJSON). Fed by the server-sent event stream GET /emails/logs/stream, ' +
    'falling back to polling GET /emails/logs when the stream is unavailable.';
  static override examples = [
    '<%= config.bin %> logs tail',
    '<%= config.bin %> logs tail --status FAILED',
    '<%= config.bin %> logs tail --json --count 1 --to ada@example.com   # wait for the first change for Ada',
  ];
  static override flags = {
    status: Flags.option({ options: EMAIL_STATUSES, description: 'only this status' })(),
    to: Flags.string({ description: 'only recipients containing this text' }),
    backlog: Flags.integer({ min: 0, max: 100, default: 20, description: 'recent emails to show first' }),
    count: Flags.integer({ min: 1, description: 'stop after this many lines (plain and JSON modes)' }),
    timeout: Flags.integer({ min: 1, description: 'stop after this many seconds (plain and JSON modes)' }),
    plain: Flags.boolean({ description: 'one line per change even in a terminal' }),
    'poll-interval': Flags.integer({
      min: 250,
      default: 2000,
      description: 'milliseconds between polls when the stream is unavailable',
    }),
  };

  async run(): Promise<void> {
    const f = this.flags;
    const source = (signal: AbortSignal, onMode: Parameters<typeof followLogs>[1]['onMode']) =>
      followLogs(this.client, { signal, onMode, backlog: f.backlog, pollMs: f['poll-interval'] });
    if (this.interactive && !f.plain && !this.jsonEnabled()) {
      await renderLogTail({
        source,
        loadDetail: (id) => this.client.getLog(id),
        initialStatus: f.status,
        initialRecipient: f.to,
      });
      return;
    }
    await this.printLines(source);
  }

  private async printLines(
    source: (signal: AbortSignal, onMode: (mode: string, reason?: string) => void) => AsyncIterable<LogEntry>,
  ): Promise<void> {
    const f = this.flags;
    const onMode = (mode: string, reason?: string) => {
      if (mode === 'poll') this.logToStderr(`Following by polling GET /emails/logs${reason ? ` (${reason})` : ''}.`);
    };
    await followLines(
      (signal) => source(signal, onMode),
      { count: f.count, timeoutSeconds: f.timeout },
      (entry) => {
        if (f.status && entry.status !== f.status) return false;
        if (f.to && !recipients(entry.to).toLowerCase().includes(f.to.toLowerCase())) return false;
        if (this.jsonEnabled()) process.stdout.write(`${JSON.stringify(entry)}\n`);
        else
          this.log(
            `${shortDate(entry.updatedAt ?? entry.createdAt)}  ${colourStatus(entry.status)}${' '.repeat(Math.max(0, 10 - entry.status.length))}  ${entry.id}  ${recipients(entry.to)}  ${entry.subject ?? ''}${entry.error ? `  ${entry.error}` : ''}`,
          );
        return true;
      },
    );
  }
}
