// What `svc logs show` prints of a log's timeline (issue 49 §4): each row's type with what it says —
// a deferral's reply and next try, a wait of ours and when it goes, a bounce's diagnostic — which
// before only --json carried.
type TimelineData = Record<string, unknown>;

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** The detail printed after a timeline row's type ('' when the row carries nothing worth a line). */
export function timelineDetail(type: string, data: TimelineData): string {
  const parts: string[] = [];
  const recipients = Array.isArray(data.recipients) ? (data.recipients as string[]).join(', ') : null;
  switch (type) {
    case 'deferred':
      parts.push(text(data.response) ?? text(data.error) ?? '');
      if (text(data.retryAt)) parts.push(`next try ${data.retryAt as string}`);
      else if (typeof data.retryInMs === 'number') parts.push(`next try in ${Math.round(data.retryInMs / 1000)} s`);
      break;
    case 'waiting':
      parts.push(`${text(data.kind) ?? 'ours'}: ${text(data.reason) ?? ''}`);
      if (text(data.until)) parts.push(`goes at ${data.until as string}`);
      break;
    case 'bounced':
    case 'failed':
      parts.push(text(data.diagnostic) ?? text(data.error) ?? '');
      break;
    case 'replied': {
      const reply = (data.reply ?? {}) as TimelineData;
      parts.push(
        `from ${text(reply.from) ?? '?'}`,
        text(reply.subject) ?? '',
        `inbound ${text(reply.inboundId) ?? '?'}`,
      );
      break;
    }
    case 'spooled':
      parts.push('handed to the outbound MTA (not yet tried)');
      break;
    default:
      return recipients ? `(${recipients})` : '';
  }
  if (recipients) parts.push(`(${recipients})`);
  return parts.filter((part) => part !== '').join(' · ');
}
