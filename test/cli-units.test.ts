// The CLI's pure parts: template files, send flags, schedules, the SSE reader, the polling fallback
// of the log feed, and the diagnosis text.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import chalk from 'chalk';
import { parseFrontMatter, readTemplateFile, serializeFrontMatter } from '../cli/services/template-files.ts';
import { parseData, parseSchedule, prepareSend } from '../cli/services/send.ts';
import { followLogs, readSseFrames } from '../cli/services/log-feed.ts';
import { renderDiagnosis } from '../cli/services/domain-report.ts';
import { ApiRequestError, CliFailure } from '../cli/errors.ts';
import type { SvcClient } from '../cli/client.ts';

chalk.level = 0;
const dir = mkdtempSync(join(tmpdir(), 'svc-cli-units-'));

test('front-matter: fields, quotes, body; .tsx files carry it in a block comment; round trip', () => {
  const parsed = parseFrontMatter('---\nslug: welcome\nsubject: "Hi, {{ name }}"\nlocale: \'fr\'\n---\n<p>x</p>\n');
  assert.equal(parsed.fields, { slug: 'welcome', subject: 'Hi, {{ name }}', locale: 'fr' });
  assert.is(parsed.body, '<p>x</p>\n');
  assert.equal(parseFrontMatter('<p>no front-matter</p>'), { fields: {}, body: '<p>no front-matter</p>' });
  const tsx = serializeFrontMatter(
    { slug: 'r', subject: 'S: "quoted"' },
    'export default () => null;\n',
    'react-email',
  );
  assert.ok(tsx.startsWith('/*\n---\n'));
  const back = parseFrontMatter(tsx);
  assert.equal(back.fields, { slug: 'r', subject: 'S: "quoted"' });
  assert.is(back.body, 'export default () => null;\n');
});

test('readTemplateFile: editor mode from the extension, flags win, slug from the file name, errors exit 2', async () => {
  const html = join(dir, 'Receipt.liquid');
  writeFileSync(html, '---\nsubject: Your receipt\nname: Receipt\n---\n<p>{{ total }}</p>');
  const file = await readTemplateFile(html, { locale: 'en' });
  assert.equal(
    { ...file },
    {
      slug: 'receipt',
      name: 'Receipt',
      subject: 'Your receipt',
      locale: 'en',
      editorMode: 'html',
      content: '<p>{{ total }}</p>',
      text: undefined,
      fields: { subject: 'Your receipt', name: 'Receipt' },
    },
  );
  assert.is((await readTemplateFile(html, { subject: 'Override', slug: 'r2' })).subject, 'Override');
  const tsx = join(dir, 'card.tsx');
  writeFileSync(tsx, 'export default function Card() { return null; }');
  const jsx = await readTemplateFile(tsx, { subject: 'Card' });
  assert.is(jsx.editorMode, 'react-email');
  for (const [path, overrides] of [
    [tsx, {}],
    [join(dir, 'x.txt'), { subject: 's' }],
    [join(dir, 'missing.html'), { subject: 's' }],
    [html, { slug: 'Bad Slug' }],
  ] as const) {
    if (path.endsWith('.txt')) writeFileSync(path, 'x');
    try {
      await readTemplateFile(path, overrides);
      assert.unreachable(`${path} should be refused`);
    } catch (error) {
      assert.instance(error, CliFailure);
      assert.is((error as CliFailure).exitCode, 2);
    }
  }
});

test('prepareSend builds SendEmailDto or SendTemplateDto; parseData reads @files', async () => {
  const dataFile = join(dir, 'vars.json');
  writeFileSync(dataFile, '{"name":"Ada"}');
  assert.equal(await parseData(`@${dataFile}`), { name: 'Ada' });
  await parseData('[1,2]').then(
    () => assert.unreachable(),
    (error: CliFailure) => assert.match(error.message, 'JSON object'),
  );
  const email = await prepareSend({
    to: ['a@x.test', 'b@x.test'],
    from: 'f@x.test',
    subject: 's',
    text: 't',
    tags: ['t1'],
  });
  assert.equal(email, {
    kind: 'email',
    body: { to: ['a@x.test', 'b@x.test'], from: 'f@x.test', tags: ['t1'], subject: 's', textBody: 't' },
  });
  const htmlFile = join(dir, 'body.html');
  writeFileSync(htmlFile, '<b>hi</b>');
  const withFile = await prepareSend({ to: ['a@x.test'], from: 'f@x.test', subject: 's', htmlFile });
  assert.is(withFile.kind === 'email' ? withFile.body.htmlBody : undefined, '<b>hi</b>');
  const template = await prepareSend({ to: ['a@x.test'], template: 'welcome', data: '{"n":1}', locale: 'fr' });
  assert.equal(template, { kind: 'template', body: { slug: 'welcome', to: 'a@x.test', data: { n: 1 }, locale: 'fr' } });
  await prepareSend({ to: ['a@x.test'], template: 'w', html: '<p>' }).then(
    () => assert.unreachable(),
    (error: Error) => assert.match(error.message, '--template'),
  );
  await prepareSend({ to: ['a@x.test'], from: 'f@x.test', subject: 's' }).then(
    () => assert.unreachable(),
    (error: Error) => assert.match(error.message, '--text'),
  );
});

test('parseSchedule takes ISO times and +delays', () => {
  const now = new Date('2026-05-01T09:00:00Z');
  assert.is(parseSchedule('+10m', now), '2026-05-01T09:10:00.000Z');
  assert.is(parseSchedule('+2h', now), '2026-05-01T11:00:00.000Z');
  assert.is(parseSchedule('+1d', now), '2026-05-02T09:00:00.000Z');
  assert.is(parseSchedule('2026-06-01T08:00:00+02:00', now), '2026-06-01T06:00:00.000Z');
  assert.throws(() => parseSchedule('soon', now), /not a time/);
});

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

test('readSseFrames: frames split across chunks, comments, CRLF, multi-line data', async () => {
  const frames = [];
  const body = streamOf([
    'retry: 3000\n\n: heartbeat\n\nid: 1|a\nevent: em',
    'ail\ndata: {"id":"a"}\n\n',
    'event: email\r\ndata: line1\r\ndata: line2\r\n\r\n',
  ]);
  for await (const frame of readSseFrames(body, new AbortController().signal)) frames.push(frame);
  assert.equal(frames, [
    { event: 'email', data: '{"id":"a"}', id: '1|a' },
    { event: 'email', data: 'line1\nline2' },
  ]);
});

test('followLogs falls back to polling when the stream endpoint is refused, yielding only changes', async () => {
  const pages = [
    [
      { id: '2', status: 'QUEUED', attempts: 0, error: null },
      { id: '1', status: 'SENT', attempts: 1, error: null },
    ],
    [
      { id: '2', status: 'SENT', attempts: 1, error: null },
      { id: '1', status: 'SENT', attempts: 1, error: null },
    ],
  ];
  let calls = 0;
  const client = {
    openLogStream: async () => {
      throw new ApiRequestError(404, {
        statusCode: 404,
        error: 'Not Found',
        code: 'ROUTE_NOT_FOUND',
        message: 'Route GET:/emails/logs/stream not found',
      });
    },
    listLogs: async () => ({
      data: pages[Math.min(calls++, pages.length - 1)],
      meta: { page: 1, limit: 20, total: 2, totalPages: 1 },
    }),
  } as unknown as SvcClient;
  const controller = new AbortController();
  const modes: string[] = [];
  const seen: string[] = [];
  for await (const entry of followLogs(client, {
    signal: controller.signal,
    pollMs: 5,
    onMode: (mode, reason) => modes.push(`${mode}: ${reason}`),
  })) {
    seen.push(`${entry.id}:${entry.status}`);
    if (seen.length === 3) controller.abort();
  }
  assert.equal(seen, ['1:SENT', '2:QUEUED', '2:SENT']);
  assert.equal(modes, ['poll: Route GET:/emails/logs/stream not found']);
});

test('renderDiagnosis marks each record and prints the record to publish', () => {
  const text = renderDiagnosis({
    domain: 'mail.acme.test',
    ok: false,
    checkedAt: '2026-05-01T09:00:00.000Z',
    problems: [
      {
        record: 'spf',
        severity: 'error',
        code: 'SPF_MISSING' as never,
        message: 'No SPF record.',
        fix: 'Publish the SPF record.',
      },
      {
        record: 'dmarc',
        severity: 'warning',
        code: 'DMARC_MISSING' as never,
        message: 'No DMARC record.',
        fix: 'Publish DMARC.',
      },
    ],
    publish: [{ record: 'spf', type: 'TXT', name: 'mail.acme.test', value: 'v=spf1 ~all' }],
    senderRules: {
      enforced: true,
      rules: [
        { rule: 'dkimAligned', status: 'pass', message: 'Signed with d=mail.acme.test.', fix: null },
        {
          rule: 'dmarcRecord',
          status: 'fail',
          message: 'No DMARC record.',
          fix: 'Publish a TXT record at _dmarc.mail.acme.test: v=DMARC1; p=none',
        },
      ],
    },
  });
  assert.match(text, '✗ mail.acme.test has problems');
  assert.match(
    text,
    '✗ SPF\n    No SPF record.\n    fix: Publish the SPF record.\n    publish: TXT   mail.acme.test  "v=spf1 ~all"',
  );
  assert.match(text, '! DMARC');
  assert.match(text, 'Sender rules (enforced: direct delivery refuses a send that breaks one)');
  assert.match(text, '✓ DKIM aligned with From  Signed with d=mail.acme.test.');
  assert.match(
    text,
    '✗ DMARC record  No DMARC record.\n    fix: Publish a TXT record at _dmarc.mail.acme.test: v=DMARC1; p=none',
  );
});

test.run();
