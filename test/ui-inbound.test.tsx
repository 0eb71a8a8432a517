// The live inbound screen (cli/ui/InboundTail.tsx) in a test renderer: messages arrive from the feed,
// newest at the bottom with their status; s cycles the status filter; ↑ selects, Enter opens the parsed
// message (verdicts, attachment, the reply without its quote), r its raw source, Esc returns, q quits.
// And the dashboard's line of the day's inbound mail.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import React from 'react';
import { render } from 'ink-testing-library';
import { InboundTail } from '../cli/ui/InboundTail.tsx';
import { Dashboard } from '../cli/ui/Dashboard.tsx';
import type { DashboardData } from '../cli/services/dashboard.ts';
import type { InboundMessageDetail, InboundMessageSummary, InboundStats } from '../shared/schemas/inbound.ts';
import { waitFor } from './helpers/wait.ts';

async function shows(lastFrame: () => string | undefined, text: string | RegExp): Promise<string> {
  const found = () => {
    const frame = lastFrame() ?? '';
    return typeof text === 'string' ? frame.includes(text) : text.test(frame);
  };
  await waitFor(`the screen to show ${String(text)}`, found, { timeoutMs: 5_000, details: () => lastFrame() ?? '' });
  return lastFrame()!;
}
const UP = '\u001b[A';
const ESC = '\u001b';
const ENTER = '\r';

function summary(n: number, status: InboundMessageSummary['status'], subject: string): InboundMessageSummary {
  const at = new Date(Date.UTC(2026, 10, 29, 9, 0, n)).toISOString();
  return {
    id: `00000000-0000-4000-8000-00000000000${n}`,
    routeId: '5b7c3c9e-0000-4000-8000-000000000001',
    status,
    mailFrom: `sender${n}@example.net`,
    recipient: 'support@reply.acme.example',
    mailboxHash: null,
    clientIp: '192.0.2.7',
    from: `sender${n}@example.net`,
    subject,
    messageId: `<m${n}@example.net>`,
    size: 2048,
    inReplyTo: null,
    createdAt: at,
    updatedAt: at,
  };
}

function detailOf(message: InboundMessageSummary): InboundMessageDetail {
  const none = { result: 'none' as const };
  return {
    ...message,
    error: null,
    inReplyTo: { emailId: '11111111-0000-4000-8000-000000000001', messageId: '<sent@acme.example>' },
    parsed: {
      from: { address: message.from!, name: 'Ann Sender' },
      to: [{ address: message.recipient, name: '' }],
      cc: [],
      replyTo: [],
      subject: message.subject!,
      date: message.createdAt,
      messageId: message.messageId,
      inReplyTo: '<sent@acme.example>',
      references: [],
      text: 'Thanks, it works.\n\n> the quoted history',
      html: null,
      strippedText: 'Thanks, it works.',
      strippedSignature: null,
      headers: [],
      attachments: [
        { filename: 'invoice.pdf', contentType: 'application/pdf', size: 4096, contentId: null, sha256: 'ab' },
      ],
      auth: {
        spf: { ...none, result: 'pass', domain: 'example.net', clientIp: '192.0.2.7', explanation: null },
        dkim: {
          result: 'pass',
          signatures: [{ domain: 'example.net', selector: 's1', result: 'pass', aligned: true, comment: null }],
        },
        dmarc: { result: 'pass', domain: 'example.net', policy: 'reject' },
        arc: { ...none, instance: 0, sealer: null },
      },
    },
  };
}

test('messages arrive, s filters by status, Enter opens the parsed message, r the raw source, q quits', async () => {
  const first = [summary(1, 'stored', 'Where is my order?'), summary(2, 'failed', 'Endpoint down')];
  let release!: () => void;
  const later = new Promise<void>((resolve) => (release = resolve));
  async function* source(): AsyncGenerator<InboundMessageSummary> {
    yield* first;
    await later;
    yield summary(3, 'delivered', 'Re: ticket 42');
  }
  const opened: string[] = [];
  let exited = false;
  const { stdin, lastFrame, unmount } = render(
    <InboundTail
      source={source}
      loadDetail={async (id) => {
        opened.push(`detail ${id}`);
        return detailOf([...first, summary(3, 'delivered', 'Re: ticket 42')].find((m) => m.id === id)!);
      }}
      loadRaw={async (id) => {
        opened.push(`raw ${id}`);
        return 'Received: from mx.example.net\r\nSubject: Re: ticket 42\r\n\r\nThanks, it works.\r\n';
      }}
      onExit={() => (exited = true)}
      rows={30}
      columns={100}
    />,
  );
  try {
    let frame = await shows(lastFrame, 'Endpoint down');
    assert.match(frame, /Inbound mail ● live/);
    assert.match(frame, /  09:00:01 stored\s+sender1@example\.net\s+support@reply\.acme\S*\s+Where is my order\?/);
    release();
    frame = await shows(lastFrame, 'Re: ticket 42');
    assert.ok(frame.indexOf('Endpoint down') < frame.indexOf('Re: ticket 42'), 'newest at the bottom');

    for (const key of ['s', 's', 's', 's', 's']) stdin.write(key); // all → received → delivered → failed → stored → forwarded
    await shows(lastFrame, 'status: forwarded');
    frame = await shows(lastFrame, 'Waiting for mail…');
    stdin.write('s');
    frame = await shows(lastFrame, 'status: all');

    // ↑ selects the newest, ↑ again the one before; Enter opens the selected one.
    stdin.write(UP);
    await shows(lastFrame, /› 09:00:03/);
    stdin.write(UP);
    await shows(lastFrame, /› 09:00:02/);
    stdin.write(ENTER);
    frame = await shows(lastFrame, 'verdicts');
    assert.match(frame, /sender2@example\.net/);
    stdin.write(ESC);
    await shows(lastFrame, /› 09:00:02/);
    // Down past the last clears the selection: Enter then opens the newest, the one a watcher waits for.
    stdin.write('\u001b[B');
    await shows(lastFrame, /› 09:00:03/);
    stdin.write('\u001b[B');
    await waitFor('the selection to clear', () => !lastFrame()!.includes('›'));
    stdin.write(ENTER);
    frame = await shows(lastFrame, 'verdicts');
    assert.match(frame, /from\s+Ann Sender <sender3@example\.net>/);
    assert.match(
      frame,
      /verdicts\s+spf=pass\(example\.net\) dkim=pass\(example\.net\) dmarc=pass\(p=reject\) arc=none/,
    );
    assert.match(frame, /answers\s+email 11111111-0000-4000-8000-000000000001/);
    assert.match(frame, /attachment\s+invoice\.pdf\s+application\/pdf\s+4\.0 KiB/);
    assert.match(frame, /Thanks, it works\./);
    assert.not.match(frame, /the quoted history/);
    assert.match(frame, /r raw source · Esc back/);

    stdin.write('r');
    frame = await shows(lastFrame, 'Received: from mx.example.net');
    assert.match(frame, /Subject: Re: ticket 42/);
    const id = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;
    assert.equal(opened, [`detail ${id(2)}`, `detail ${id(3)}`, `raw ${id(3)}`]);
    stdin.write(ESC);
    frame = await shows(lastFrame, 'Enter open · r raw · q quit');
    assert.match(frame, /Where is my order\?/);
    stdin.write('q');
    await waitFor('q to quit', () => exited);
  } finally {
    unmount();
  }
});

test('the dashboard shows the last 24 h of inbound mail and its failing endpoints, or why it could not count it', async () => {
  const down = { value: null, error: 'not loaded in this test' };
  const data = (inbound: DashboardData['inbound']): DashboardData => ({
    tenant: down,
    quota: down,
    queues: down,
    recent: { value: [], error: null },
    failingWebhooks: { value: [], error: null },
    warnings: { value: [], error: null },
    inbound,
    loadedAt: '',
  });
  const counts = (total: number, failed: number) => ({
    total,
    received: 0,
    delivered: total - failed,
    failed,
    stored: 0,
    forwarded: 0,
  });
  const stats = (total: number, failed: number, failingEndpoints: InboundStats['failingEndpoints'] = []) => ({
    last24h: { since: '2026-11-28T10:00:00.000Z', ...counts(total, failed) },
    last7d: { since: '2026-11-22T10:00:00.000Z', ...counts(total, failed) },
    routes: [],
    failingEndpoints,
  });
  const failing = {
    endpointId: '00000000-0000-4000-8000-000000000001',
    url: 'https://app.example/hooks/inbound',
    enabled: false,
    consecutiveFailures: 20,
    failed: 3,
    retrying: 1,
    lastError: 'HTTP 500',
    lastFailedAt: '2026-11-29T09:00:00.000Z',
  };
  for (const [inbound, expected] of [
    [{ value: stats(12, 1, [failing]), error: null }, 'Inbound 24 h 12 received, 1 failed'],
    [
      { value: stats(12, 1, [failing]), error: null },
      'failing https://app.example/hooks/inbound: HTTP 500 (3 failed, 1 retrying, switched off)',
    ],
    [{ value: stats(0, 0), error: null }, 'Inbound 24 h 0 received, 0 failed'],
    [{ value: null, error: 'This key lacks the inbound:read scope.' }, 'Inbound 24 h This key lacks'],
  ] as const) {
    const screen = render(
      <Dashboard
        load={async () => data(inbound)}
        onAction={() => {}}
        onExit={() => {}}
        refreshMs={60_000}
        columns={100}
        rows={30}
      />,
    );
    try {
      await shows(screen.lastFrame, expected);
    } finally {
      screen.unmount();
    }
  }
});

test.run();
