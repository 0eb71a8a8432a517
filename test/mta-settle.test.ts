// What one attempt of a spool row records (daemon/mta/settle.ts): per recipient, delivered and bounced
// outcomes for the log, deferred ones kept in the row for retry.ts's next try with a timeline entry,
// and, once the next try would pass the row's expiry, a final soft bounce that suppresses nobody.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { classifyReply } from '../daemon/mta/outcome.ts';
import { pendingRecipients, settleAttempt } from '../daemon/mta/settle.ts';
import type { SpooledRow } from '../daemon/mta/sql/spool.ts';

const now = new Date('2026-11-25T12:00:00Z');

function row(overrides: Partial<SpooledRow> = {}): SpooledRow {
  return {
    id: 'row-1',
    tenantId: 'tenant-1',
    emailId: 'email-1',
    projectId: null,
    stream: 'transactional',
    domain: 'x.test',
    recipients: [
      { address: 'a@x.test', state: 'pending', response: null },
      { address: 'b@x.test', state: 'pending', response: null },
      { address: 'c@x.test', state: 'pending', response: null },
    ],
    envelopeFrom: 'bounce@acme.test',
    message: Buffer.from('x'),
    attempts: 0,
    expiresAt: new Date(now.getTime() + 3_600_000),
    dataSentAt: null,
    ...overrides,
  };
}

const verdicts = (replies: Record<string, string>) =>
  Object.entries(replies).map(([address, reply]) => ({ address, verdict: classifyReply(reply) }));

test('delivered, bounced (hard and policy) and deferred recipients of one attempt', () => {
  const settled = settleAttempt(
    row(),
    verdicts({ 'a@x.test': '250 2.0.0 OK', 'b@x.test': '550 5.1.1 no such user', 'c@x.test': '451 4.7.1 later' }),
    { retryBaseMs: 1000, now },
  );
  assert.equal(
    settled.outcomes.map((o) => [o.type, o.bounceType ?? null, o.recipients]),
    [
      ['delivered', null, ['a@x.test']],
      ['bounced', 'hard', ['b@x.test']],
    ],
  );
  assert.is(settled.spool.state, 'deferred');
  assert.ok(
    settled.spool.runAt!.getTime() >= now.getTime() + 800 && settled.spool.runAt!.getTime() <= now.getTime() + 1200,
  );
  assert.is(settled.spool.lastResponse, '451 4.7.1 later');
  assert.equal(pendingRecipients(settled.spool), ['c@x.test'], 'only the deferred recipient is tried again');
  assert.equal(settled.deferral?.recipients, ['c@x.test']);
  assert.is(settled.deferral?.response, '451 4.7.1 later');

  const policy = settleAttempt(row(), verdicts({ 'a@x.test': '550 5.7.1 rejected: spam' }), { retryBaseMs: 1000, now });
  assert.is(policy.outcomes[0].bounceType, 'policy');
  assert.is(policy.spool.state, 'deferred', 'recipients without a verdict are kept, never dropped');
  assert.equal(pendingRecipients(policy.spool), ['b@x.test', 'c@x.test']);

  const all = settleAttempt(row(), verdicts({ 'a@x.test': '250 OK', 'b@x.test': '250 OK', 'c@x.test': '250 OK' }), {
    retryBaseMs: 1000,
    now,
  });
  assert.is(all.spool.state, 'done');
  assert.is(all.outcomes.length, 3);
});

test('a deferral whose next try passes the expiry bounces soft and final, and the row is done', () => {
  const settled = settleAttempt(
    row({
      attempts: 20,
      expiresAt: new Date(now.getTime() + 1000),
      recipients: [{ address: 'a@x.test', state: 'deferred', response: '421 4.4.2 timeout' }],
    }),
    verdicts({ 'a@x.test': '421 4.4.2 timeout' }),
    { retryBaseMs: 60_000, now },
  );
  assert.is(settled.spool.state, 'done');
  assert.is(settled.deferral, null);
  assert.is(settled.outcomes.length, 1);
  const [bounce] = settled.outcomes;
  assert.is(bounce.type, 'bounced');
  assert.is(bounce.bounceType, 'soft');
  assert.is(bounce.final, true);
  assert.match(bounce.diagnostic ?? '', /expired after 21 attempts; last response: 421 4\.4\.2 timeout/);
});

test('system mail (no tenant, no log) settles the row without outcomes', () => {
  const settled = settleAttempt(row({ tenantId: null, emailId: null }), verdicts({ 'a@x.test': '250 OK' }), {
    retryBaseMs: 1000,
    now,
  });
  assert.equal(settled.outcomes, []);
  assert.is(settled.spool.recipients[0].state, 'delivered');
});

test('answered before a crash: delivered from the mark, not sent again; the rest tried as usual', () => {
  const reclaimed = row({
    dataSentAt: now,
    recipients: [
      { address: 'a@x.test', state: 'answered', response: '250 2.0.0 queued as A1' },
      { address: 'b@x.test', state: 'pending', response: null },
      { address: 'c@x.test', state: 'delivered', response: '250 2.0.0 earlier' },
    ],
  });
  assert.equal(pendingRecipients(reclaimed), ['b@x.test'], 'the answered recipient is not sent again');
  const settled = settleAttempt(reclaimed, verdicts({ 'b@x.test': '250 2.0.0 OK' }), { retryBaseMs: 1000, now });
  assert.equal(
    settled.outcomes.map((o) => [o.type, o.recipients]),
    [
      ['delivered', ['a@x.test']],
      ['delivered', ['b@x.test']],
    ],
    'one outcome each; the recipient delivered on an earlier attempt adds none',
  );
  assert.is(settled.spool.state, 'done');
  assert.equal(settled.spool.recipients[0], {
    address: 'a@x.test',
    state: 'delivered',
    response: '250 2.0.0 queued as A1',
  });
});

test.run();
