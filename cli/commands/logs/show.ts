import { Args, Flags } from '@oclif/core';
import chalk from 'chalk';
import { SvcCommand } from '../../base-command.ts';
import { colourStatus, keyValue, recipients, shortDate } from '../../format.ts';
import type { EmailLogDetail } from '../../api-types.ts';
import { timelineDetail } from '../../services/timeline.ts';

export default class LogsShow extends SvcCommand<typeof LogsShow> {
  static override operations = ['getEmailsLogsById'];
  static override summary = 'Show one sent email: status, timeline, and its bodies.';
  static override examples = [
    '<%= config.bin %> logs show 0e7c…',
    '<%= config.bin %> logs show 0e7c… --html',
    '<%= config.bin %> logs show 0e7c… --json',
  ];
  static override args = { id: Args.string({ description: 'email id', required: true }) };
  static override flags = {
    html: Flags.boolean({ description: 'print the HTML body instead of the text body' }),
  };

  async run(): Promise<EmailLogDetail> {
    const log = await this.client.getLog(this.args.id);
    this.log(
      keyValue([
        ['id', log.id],
        ['status', colourStatus(log.status) + (log.error ? chalk.red(`  ${log.error}`) : '')],
        ['from', log.from],
        ['to', recipients(log.to)],
        ['subject', log.subject],
        ['message-id', log.messageId],
        ['created', shortDate(log.createdAt)],
        // With direct delivery sentAt is when the MTA took the message, not a delivery.
        [log.events?.some((e) => e.type === 'spooled') ? 'spooled' : 'sent', shortDate(log.sentAt)],
        [
          'waiting',
          log.waiting ? `${log.waiting.kind}: ${log.waiting.reason} (goes at ${log.waiting.until ?? '?'})` : null,
        ],
        ['attempts', String(log.attempts)],
        ['smtp', log.smtpResponse],
        ['tags', log.tags?.join(', ') || null],
      ]),
    );
    if (log.events?.length) {
      this.log(chalk.bold('\nTimeline'));
      for (const event of log.events) {
        const detail = timelineDetail(event.type, event.data);
        this.log(`  ${shortDate(event.createdAt)}  ${event.type}${detail ? `  ${chalk.dim(detail)}` : ''}`);
      }
    }
    if (log.replies?.length) {
      this.log(chalk.bold('\nReplies'));
      for (const reply of log.replies) {
        this.log(
          `  ${shortDate(reply.receivedAt)}  ${reply.from ?? '?'}  ${reply.subject ?? ''}  ${chalk.dim(reply.inboundId)}`,
        );
      }
    }
    const body = this.flags.html ? log.bodyHtml : (log.bodyText ?? log.bodyHtml);
    if (body) this.log(`\n${chalk.bold(this.flags.html ? 'HTML body' : 'Body')}\n${body}`);
    return log;
  }
}
