import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { colourStatus, keyValue } from '../../format.ts';
import { CliFailure, EXIT } from '../../errors.ts';
import { parseSchedule, prepareSend } from '../../services/send.ts';

export interface SendResult {
  id: string;
  status: string;
  messageId?: string;
  error?: string;
  scheduledFor?: string;
  /** --sync with direct delivery: the recipient's server deferred it (its reply), or a wait of ours holds it. */
  deferred?: { reason: string; retryAt: string | null };
  waiting?: { reason: string; until: string | null };
  message?: string;
}

export default class Send extends SvcCommand<typeof Send> {
  static override operations = ['postEmailsSend', 'postEmailsSendTemplate', 'postScheduledEmails'];
  static override summary = 'Send an email, or a published template, and print its id and status.';
  static override description =
    'Queued by default (status QUEUED); --sync delivers before answering: SENT (a relay took it) or FAILED; with ' +
    "DELIVERY=direct what the recipient's server said (DELIVERED, BOUNCED, or QUEUED with its deferral) or QUEUED with why. " +
    '--schedule sends later. ' +
    'Exit 0 once the daemon accepted the send; with --sync, exit 1 when the delivery FAILED or BOUNCED (the result is printed either way). ' +
    'With --data and no --template, --subject, --html and --text are Liquid, rendered when the daemon accepts the send ' +
    '(broken Liquid is refused, exit 1); without --data they are sent as written.';
  static override examples = [
    '<%= config.bin %> send --to ada@example.com --from hello@acme.test --subject Hi --text "Hello"',
    '<%= config.bin %> send --to ada@example.com --template welcome --data \'{"name":"Ada"}\' --json',
    '<%= config.bin %> send --to ada@example.com --from hello@acme.test --subject Report --html-file report.html --schedule +1h',
    '<%= config.bin %> send --to ada@example.com --template receipt --data @order.json --idempotency-key order-1234 --sync',
  ];
  static override flags = {
    to: Flags.string({
      description: 'recipient (repeat for several, at most 50 in all)',
      required: true,
      multiple: true,
    }),
    from: Flags.string({
      description: "sender address, on a verified domain (with --template: default the template's own from)",
    }),
    subject: Flags.string({ description: 'subject line (Liquid, rendered with --data)' }),
    html: Flags.string({ description: 'HTML body' }),
    'html-file': Flags.string({ description: 'read the HTML body from this file' }),
    text: Flags.string({ description: 'plain-text body' }),
    template: Flags.string({ description: 'slug of a published template to send instead of a body' }),
    locale: Flags.string({ description: 'template locale to use (with --template)' }),
    data: Flags.string({
      description: 'Liquid variables of --template, or of --subject and the bodies: JSON, or @file.json',
    }),
    cc: Flags.string({ multiple: true, description: 'copy recipient (repeat)' }),
    bcc: Flags.string({ multiple: true, description: 'blind copy recipient (repeat)' }),
    'reply-to': Flags.string({ description: 'Reply-To address' }),
    tag: Flags.string({ multiple: true, description: 'tag for filtering logs (repeat)' }),
    sync: Flags.boolean({
      description: 'deliver now and report SENT or FAILED instead of QUEUED',
      exclusive: ['schedule'],
    }),
    schedule: Flags.string({ description: 'send later: ISO 8601 time or a delay (+10m, +2h, +1d)' }),
    timezone: Flags.string({
      description: 'IANA time zone of --schedule (default Europe/Madrid)',
      dependsOn: ['schedule'],
    }),
    'idempotency-key': Flags.string({
      description: 'same key and body within 24 h returns the first answer instead of sending twice',
    }),
  };

  async run(): Promise<SendResult> {
    const f = this.flags;
    const prepared = await prepareSend({
      to: f.to,
      from: f.from,
      subject: f.subject,
      html: f.html,
      htmlFile: f['html-file'],
      text: f.text,
      template: f.template,
      locale: f.locale,
      data: f.data,
      cc: f.cc,
      bcc: f.bcc,
      replyTo: f['reply-to'],
      tags: f.tag,
    });
    const idempotencyKey = f['idempotency-key'];
    let result: SendResult;
    if (f.schedule) {
      const sendAt = parseSchedule(f.schedule);
      if (prepared.kind === 'template') {
        throw new CliFailure(
          '--schedule takes a body (--html, --html-file or --text); scheduled template sends are not supported by the API.',
          EXIT.usage,
          'BAD_FLAGS',
        );
      }
      const scheduled = await this.client.schedule(
        { ...prepared.body, sendAt, ...(f.timezone ? { timezone: f.timezone } : {}) },
        { idempotencyKey },
      );
      result = { id: scheduled.id, status: scheduled.status, scheduledFor: scheduled.sendAt };
    } else {
      const options = { sync: f.sync, idempotencyKey };
      const answer =
        prepared.kind === 'template'
          ? await this.client.sendTemplate(prepared.body, options)
          : await this.client.send(prepared.body, options);
      result = {
        id: answer.id,
        status: answer.status,
        ...(answer.messageId ? { messageId: answer.messageId } : {}),
        ...(answer.error ? { error: answer.error } : {}),
        ...(answer.deferred ? { deferred: answer.deferred } : {}),
        ...(answer.waiting ? { waiting: answer.waiting } : {}),
        ...(answer.message ? { message: answer.message } : {}),
      };
    }
    this.log(
      keyValue([
        ['id', result.id],
        ['status', colourStatus(result.status)],
        ...(result.messageId ? [['message-id', result.messageId] as [string, string]] : []),
        ...(result.scheduledFor ? [['scheduled for', result.scheduledFor] as [string, string]] : []),
        ...(result.error ? [['error', result.error] as [string, string]] : []),
        ...(result.deferred
          ? [
              ['deferred', `${result.deferred.reason} (next try ${result.deferred.retryAt ?? 'unknown'})`] as [
                string,
                string,
              ],
            ]
          : []),
        ...(result.waiting
          ? [['waiting', `${result.waiting.reason} (goes at ${result.waiting.until ?? 'unknown'})`] as [string, string]]
          : []),
        ...(result.message ? [['note', result.message] as [string, string]] : []),
      ]),
    );
    if (f.sync && (result.status === 'FAILED' || result.status === 'BOUNCED')) process.exitCode = EXIT.refused;
    return result;
  }
}
