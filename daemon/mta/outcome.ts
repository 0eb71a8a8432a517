// What one recipient's SMTP answer means for the message and for the address, by the reply code and
// its RFC 3463 enhanced status. The rules that decide suppression are the ones that matter: only a
// mailbox or domain that does not exist suppresses the address; a policy, spam or reputation refusal
// is about the sender, so it bounces the message without suppressing the recipient (and counts for the
// tenant's pause); a full mailbox is a soft bounce.

export type BounceType =
  /** The address does not exist (5.1.x about the recipient): suppressed. */
  | 'hard'
  /** Refused for policy, spam, reputation, content or protocol reasons: not suppressed. */
  | 'policy'
  /** Mailbox full or over quota (5.2.2): not suppressed. */
  | 'soft';

export type RecipientVerdict =
  | { kind: 'delivered'; response: string }
  | { kind: 'bounced'; bounceType: BounceType; response: string; enhancedCode: string | null }
  /** Try again later: 4xx, a timeout, a connection refused or reset, a DNS answer that did not come. */
  | { kind: 'deferred'; response: string; enhancedCode: string | null };

/** `5.1.1` from `550 5.1.1 <x>: no such user`, when the class matches the reply's first digit. */
export function enhancedCodeOf(reply: string): string | null {
  const match = /^([245])\d\d[ -]([245]\.\d{1,3}\.\d{1,3})\b/.exec(reply.trim());
  return match && match[1] === match[2][0] ? match[2] : null;
}

function replyCodeOf(reply: string): number | null {
  const match = /^([1-5]\d\d)\b/.exec(reply.trim());
  return match ? Number(match[1]) : null;
}

// RFC 3463 §3.2: X.1.x are address statuses. Of those, the ones about the *recipient* mean it does
// not exist or cannot be reached at that name; 5.1.7/5.1.8 are about the sender.
const RECIPIENT_GONE = new Set(['5.1.0', '5.1.1', '5.1.2', '5.1.3', '5.1.4', '5.1.6', '5.1.10', '5.2.1']);
const MAILBOX_FULL = new Set(['5.2.2']);
// Receivers that send no enhanced code still say why; these words mean a refusal of the sender.
const POLICY_WORDS = /\b(spam|policy|block(ed|list)?|blacklist|reputation|rate|dmarc|spf|dkim|denied|rejected for)\b/i;
const MAILBOX_WORDS =
  /\b(no such|unknown|does not exist|doesn't exist|invalid (recipient|mailbox|address)|user not found|mailbox unavailable)\b/i;

/** A 5xx reply's bounce type. */
export function bounceTypeOf(reply: string, enhancedCode: string | null): BounceType {
  if (enhancedCode) {
    if (RECIPIENT_GONE.has(enhancedCode)) return 'hard';
    if (MAILBOX_FULL.has(enhancedCode)) return 'soft';
    return 'policy';
  }
  // RFC 5321 codes alone: 550/551/553 are mailbox answers unless the text says policy; 552 is
  // "exceeded storage allocation".
  const code = replyCodeOf(reply);
  if (code === 552) return 'soft';
  if ((code === 550 || code === 551 || code === 553) && !POLICY_WORDS.test(reply) && MAILBOX_WORDS.test(reply))
    return 'hard';
  return 'policy';
}

/** The verdict for a recipient from the server's reply to its RCPT, or to the message's DATA. */
export function classifyReply(reply: string): RecipientVerdict {
  const response = reply.trim();
  const code = replyCodeOf(response);
  const enhancedCode = enhancedCodeOf(response);
  if (code !== null && code >= 200 && code < 300) return { kind: 'delivered', response };
  if (code !== null && code >= 500)
    return { kind: 'bounced', bounceType: bounceTypeOf(response, enhancedCode), response, enhancedCode };
  // 4xx, and a reply that is not SMTP at all: the answer may differ later.
  return { kind: 'deferred', response, enhancedCode };
}

/** The verdict when there was no reply to read: a socket error, a timeout, a reset, a TLS failure. */
export function deferredByError(description: string): RecipientVerdict {
  return { kind: 'deferred', response: description, enhancedCode: null };
}
