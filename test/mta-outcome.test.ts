// The rules that turn an SMTP answer into a recipient's verdict (RFC 3463 enhanced codes first, the
// reply code and its words when there is none), and the deferral schedule with its expiry.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { classifyReply, enhancedCodeOf } from '../daemon/mta/outcome.ts';
import { MAX_RETRY_DELAY_MS, expiryOf, nextAttempt } from '../daemon/mta/retry.ts';

function summary(reply: string): string {
  const verdict = classifyReply(reply);
  return verdict.kind === 'bounced' ? `bounced:${verdict.bounceType}` : verdict.kind;
}

test('enhanced codes are read only when their class matches the reply', () => {
  assert.is(enhancedCodeOf('550 5.1.1 <a@b>: no such user'), '5.1.1');
  assert.is(enhancedCodeOf('550-5.7.26 Unauthenticated email'), '5.7.26');
  assert.is(enhancedCodeOf('451 4.7.1 greylisted'), '4.7.1');
  assert.is(enhancedCodeOf('550 4.1.1 mismatched'), null);
  assert.is(enhancedCodeOf('550 no such user'), null);
});

test('verdicts: bad mailbox suppresses, policy and spam do not, mailbox full is soft, 4xx defers', () => {
  const cases: [string, string][] = [
    ['250 2.0.0 OK queued as 123', 'delivered'],
    ['250 OK', 'delivered'],
    ['550 5.1.1 The email account that you tried to reach does not exist', 'bounced:hard'],
    ['550 5.1.10 RESOLVER.ADR.RecipientNotFound', 'bounced:hard'],
    ['553 5.1.3 bad recipient address syntax', 'bounced:hard'],
    ['550 5.2.1 mailbox disabled', 'bounced:hard'],
    ['552 5.2.2 mailbox full', 'bounced:soft'],
    ['550 5.1.8 bad sender domain', 'bounced:policy'],
    ['550 5.7.1 message rejected as spam', 'bounced:policy'],
    ['550 5.7.26 unauthenticated email from sender.test is not accepted due to DMARC policy', 'bounced:policy'],
    ['554 5.7.1 Service unavailable; client host blocked using zen.spamhaus.org', 'bounced:policy'],
    ['552 5.3.4 message too big', 'bounced:policy'],
    ['550 no such user here', 'bounced:hard'],
    ['550 rejected: blocked by policy', 'bounced:policy'],
    ['554 transaction failed', 'bounced:policy'],
    ['552 requested mail action aborted: exceeded storage allocation', 'bounced:soft'],
    ['421 4.7.0 try again later, closing connection', 'deferred'],
    ['451 4.7.1 greylisted', 'deferred'],
    ['450 4.2.2 mailbox full', 'deferred'],
    ['452 4.5.3 too many recipients', 'deferred'],
    ['garbage', 'deferred'],
  ];
  for (const [reply, expected] of cases) assert.is(summary(reply), expected, reply);
  const kept = classifyReply('  451 4.7.1 greylisted \r\n');
  assert.equal(kept, { kind: 'deferred', response: '451 4.7.1 greylisted', enhancedCode: '4.7.1' });
});

test('the deferral schedule doubles from the base with ±20 % jitter, capped at 4 h, until the expiry', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const accepted = new Date('2026-01-01T00:00:00Z');
  const expiresAt = expiryOf(accepted, 120);
  assert.is(expiresAt.toISOString(), '2026-01-06T00:00:00.000Z', '120 hours');
  const baseMs = 300_000;
  for (let attempts = 1; attempts <= 12; attempts++) {
    const delays = Array.from({ length: 50 }, () => {
      const next = nextAttempt({ attempts, baseMs, expiresAt, now });
      if (next.kind !== 'retry') throw new Error('not expired yet');
      return next.runAt.getTime() - now.getTime();
    });
    const nominal = Math.min(MAX_RETRY_DELAY_MS, baseMs * 2 ** (attempts - 1));
    assert.ok(
      delays.every((delay) => delay >= nominal * 0.8 && delay <= nominal * 1.2),
      `attempt ${attempts}: ${Math.min(...delays)}..${Math.max(...delays)} around ${nominal}`,
    );
    assert.ok(new Set(delays).size > 1, 'jittered');
  }
  const nearEnd = new Date(expiresAt.getTime() - 60_000);
  assert.equal(nextAttempt({ attempts: 3, baseMs, expiresAt, now: nearEnd }), { kind: 'expired' });
});

test.run();
