// The signed-in admin's own account: passwords, e-mail verification. Passwords come from a masked prompt in
// a terminal, or from stdin in a script, never from a flag (flags end up in shell history and `ps`).
import type { SvcClient } from '../client.ts';
import { MissingInputError } from '../errors.ts';
import { isInteractive } from '../ui/tty.ts';
import { renderPasswordPrompt } from '../ui/render.ts';
import { readStdin } from './session.ts';

export async function changePassword(client: SvcClient, currentPassword: string, newPassword: string) {
  return client.http.request<{ ok: true; revokedSessions: number }>('POST', '/auth/change-password', {
    json: {
      currentPassword,
      newPassword,
      ...(client.http.profile.refreshToken ? { refreshToken: client.http.profile.refreshToken } : {}),
    },
    tenant: false,
  });
}

export function forgotPassword(client: SvcClient, email: string, locale?: string) {
  return client.http.request<unknown>('POST', '/auth/forgot-password', {
    json: { email },
    auth: false,
    tenant: false,
    ...(locale ? { headers: { 'accept-language': locale } } : {}),
  });
}

export function resetPassword(client: SvcClient, token: string, newPassword: string) {
  return client.http.request<{ ok: true }>('POST', '/auth/reset-password', {
    json: { token, newPassword },
    auth: false,
    tenant: false,
  });
}

export function verifyEmail(client: SvcClient, token: string) {
  return client.http.request<unknown>('POST', '/auth/verify-email', { json: { token }, auth: false, tenant: false });
}

/** Signed in: the verification mail of this admin; otherwise the public form that names the address. */
export function resendVerification(client: SvcClient, email?: string) {
  return email
    ? client.http.request<unknown>('POST', '/auth/resend-verification-email', {
        json: { email },
        auth: false,
        tenant: false,
      })
    : client.http.request<unknown>('POST', '/auth/resend-verification', { tenant: false });
}

/**
 * Passwords for a command: with --password-stdin, one per line of stdin in the order of `titles`;
 * in a terminal, a masked prompt for each (the new one typed twice).
 */
export async function readPasswords(
  fromStdin: boolean,
  titles: { title: string; isNew: boolean }[],
): Promise<string[]> {
  if (fromStdin) {
    const lines = (await readStdin()).split(/\r?\n/);
    if (lines.length < titles.length || lines.slice(0, titles.length).some((line) => line === ''))
      throw new MissingInputError(
        `Pipe ${titles.length} line(s) into --password-stdin: ${titles.map((t) => t.title).join(', then ')}`,
      );
    return lines.slice(0, titles.length);
  }
  if (!isInteractive())
    throw new MissingInputError(`Pass --password-stdin and pipe in ${titles.map((t) => t.title).join(', then ')}`);
  const answers: string[] = [];
  for (const { title, isNew } of titles)
    answers.push(await renderPasswordPrompt({ title, confirm: isNew, ...(isNew ? { minLength: 10 } : {}) }));
  return answers;
}
