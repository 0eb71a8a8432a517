// Captured system mail for `svc platform mail`: the list, and one message read as a person reads it
// (headers, then the text part, with its links whole so a reset or verification token can be copied).
import { simpleParser } from 'mailparser';
import type { SvcClient } from '../client.ts';
import type { PageOf } from '../../shared/schemas/common.ts';
import type { SystemMailMessage, SystemMailSummary } from '../../shared/schemas/system-mail.ts';

export const systemMail = {
  list: (client: SvcClient, query: { to?: string; page?: number; limit?: number }) =>
    client.http.request<PageOf<SystemMailSummary>>('GET', '/platform/system-mail', { query, tenant: false }),
  read: (client: SvcClient, id: string) =>
    client.http.request<SystemMailMessage>('GET', `/platform/system-mail/${encodeURIComponent(id)}`, {
      tenant: false,
    }),
};

export interface ReadableMail {
  subject: string;
  text: string;
  links: string[];
}

export async function readableMail(raw: string): Promise<ReadableMail> {
  const parsed = await simpleParser(raw);
  const text = (parsed.text ?? '').trim();
  const links = [...new Set([...text.matchAll(/https?:\/\/[^\s<>"')]+/g)].map((match) => match[0]))];
  return { subject: parsed.subject ?? '', text, links };
}
