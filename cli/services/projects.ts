// Projects (a tenant's apps, each with optional SMTP relay settings): the calls behind `svc projects …`.
import type { SvcClient } from '../client.ts';
import type { CreateProjectBody, Project, UpdateProjectBody } from '../../shared/schemas/projects.ts';
import { CliFailure, EXIT } from '../errors.ts';

const path = (id?: string) => (id ? `/projects/${encodeURIComponent(id)}` : '/projects');

export const projects = {
  list: (client: SvcClient) => client.http.request<Project[]>('GET', path()),
  show: (client: SvcClient, id: string) => client.http.request<Project>('GET', path(id)),
  create: (client: SvcClient, body: CreateProjectBody) => client.http.request<Project>('POST', path(), { json: body }),
  update: (client: SvcClient, id: string, body: UpdateProjectBody) =>
    client.http.request<Project>('PATCH', path(id), { json: body }),
  remove: (client: SvcClient, id: string) => client.http.request<unknown>('DELETE', path(id)),
  verifySmtp: (client: SvcClient, id: string) =>
    client.http.request<{ ok: boolean; error?: string }>('POST', `${path(id)}/verify-smtp`),
};

export interface SmtpFlags {
  'smtp-host'?: string;
  'smtp-port'?: number;
  'smtp-secure'?: boolean;
  'smtp-user'?: string;
}

/** The smtp object of a project body from flags (the password comes from stdin); undefined when none given. */
export function smtpSettings(flags: SmtpFlags, pass: string | undefined): CreateProjectBody['smtp'] {
  if (flags['smtp-host'] === undefined) {
    if (flags['smtp-port'] !== undefined || flags['smtp-user'] !== undefined || pass !== undefined)
      throw new CliFailure('SMTP settings need --smtp-host.', EXIT.usage, 'MISSING_FLAG');
    return undefined;
  }
  const secure = flags['smtp-secure'] ?? false;
  return {
    host: flags['smtp-host'],
    port: flags['smtp-port'] ?? (secure ? 465 : 587),
    secure,
    ...(flags['smtp-user'] ? { user: flags['smtp-user'] } : {}),
    ...(pass !== undefined ? { pass } : {}),
  };
}
