// Turns send flags into the API's SendEmailDto / SendTemplateDto, reading files the flags point at.
import { readFile } from 'node:fs/promises';
import { CliFailure, EXIT } from '../errors.ts';
import type { SendEmailBody } from '../../shared/schemas/emails.ts';
import type { SendTemplateBody } from '../../shared/schemas/templates.ts';

export interface SendOptions {
  to: string[];
  from?: string;
  subject?: string;
  html?: string;
  htmlFile?: string;
  text?: string;
  template?: string;
  data?: string;
  locale?: string;
  tags?: string[];
  cc?: string[];
  bcc?: string[];
  replyTo?: string;
}

export type PreparedSend = { kind: 'email'; body: SendEmailBody } | { kind: 'template'; body: SendTemplateBody };

function usage(message: string): CliFailure {
  return new CliFailure(message, EXIT.usage, 'BAD_FLAGS');
}

/** `--data '{"name":"Ada"}'` or `--data @vars.json`. */
export async function parseData(raw: string | undefined): Promise<Record<string, unknown> | undefined> {
  if (raw === undefined) return undefined;
  const text = raw.startsWith('@')
    ? await readFile(raw.slice(1), 'utf8').catch(() => {
        throw usage(`Cannot read ${raw.slice(1)} given to --data.`);
      })
    : raw;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw usage(`--data is not valid JSON: ${(error as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw usage('--data must be a JSON object, e.g. \'{"name":"Ada"}\'.');
  return parsed as Record<string, unknown>;
}

export async function prepareSend(options: SendOptions): Promise<PreparedSend> {
  const data = await parseData(options.data);
  const common = {
    to: options.to.length === 1 ? options.to[0] : options.to,
    ...(options.from ? { from: options.from } : {}),
    ...(options.cc?.length ? { cc: options.cc } : {}),
    ...(options.bcc?.length ? { bcc: options.bcc } : {}),
    ...(options.replyTo ? { replyTo: options.replyTo } : {}),
    ...(options.tags?.length ? { tags: options.tags } : {}),
    ...(data ? { data } : {}),
  };
  if (options.template) {
    if (options.html || options.htmlFile || options.text)
      throw usage('--template sends the published template: drop --html, --html-file and --text.');
    return {
      kind: 'template',
      body: { slug: options.template, ...common, ...(options.locale ? { locale: options.locale } : {}) },
    };
  }
  if (!options.from) throw usage('Pass --from: the sender address (on a verified domain of the tenant).');
  if (!options.subject) throw usage('Pass --subject, or send a template with --template <slug>.');
  if (options.html && options.htmlFile) throw usage('Pass either --html or --html-file, not both.');
  const htmlBody = options.htmlFile
    ? await readFile(options.htmlFile, 'utf8').catch(() => {
        throw usage(`Cannot read ${options.htmlFile} given to --html-file.`);
      })
    : options.html;
  if (!htmlBody && !options.text) throw usage('Pass a body: --html, --html-file or --text (or --template <slug>).');
  return {
    kind: 'email',
    body: {
      ...common,
      from: options.from,
      subject: options.subject,
      ...(htmlBody ? { htmlBody } : {}),
      ...(options.text ? { textBody: options.text } : {}),
    },
  };
}

/** `--schedule` takes an ISO 8601 time or a delay such as `+10m`, `+2h`, `+1d`. */
export function parseSchedule(raw: string, now = new Date()): string {
  const delay = /^\+(\d+)([smhd])$/.exec(raw.trim());
  if (delay) {
    const unitMs = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[delay[2] as 's' | 'm' | 'h' | 'd'];
    return new Date(now.getTime() + Number(delay[1]) * unitMs).toISOString();
  }
  const date = new Date(raw);
  if (Number.isNaN(date.getTime()))
    throw usage(`--schedule "${raw}" is not a time: use ISO 8601 (2026-05-01T09:00:00Z) or a delay (+10m, +2h, +1d).`);
  return date.toISOString();
}
