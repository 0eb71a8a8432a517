// The SMTP edge of the daemon (`--role smtp`, and part of `all`): the listeners the configuration
// asks for, sharing one certificate pair (./tls.ts). Submission: SMTP_SUBMISSION_PORT (STARTTLS)
// and SMTP_SUBMISSION_TLS_PORT (implicit TLS); inbound mail (bounces, complaints, unsubscribes,
// DMARC reports: ./inbound.ts): SMTP_INBOUND_PORT, STARTTLS offered. Each off when 0 or unset.
import type { SMTPServer } from 'smtp-server';
import type { Config } from '../config.ts';
import { onHangupReload } from '../tls.ts';
import { loadSmtpTls, readConfiguredSmtpTls } from './tls.ts';
import { createSubmissionServer, createSubmissionState, insecureAuthAllowed, type SmtpDeps } from './submission.ts';
import { createInboundServer } from './inbound.ts';
import { createMetricsReporter } from '../modules/metrics/reporter.ts';
import { createTenantStateCache } from '../modules/tenants/state-cache.ts';
import { closeMailResources, type MailResources } from '../mail/resources.ts';
import { createMailResources } from '../modules/mail-resources.ts';
import { createAcceptGroups } from '../modules/emails/accept-groups.ts';
import { createSendContextCache } from '../modules/emails/send-context.ts';
import { SpooledMessageAnnouncer } from '../mta/spooled-messages.ts';
import { installFastDataStream } from './data-stream.ts';

/**
 * What the edge is given; it makes its own cache of keys and tenant state, its own group commit of
 * accepts, and its own mail resources (with the API's DKIM key cache when given one: both in one process).
 */
export type SmtpEdgeDeps = Omit<
  SmtpDeps,
  'tenantState' | 'acceptGroups' | 'sendContext' | 'spooledMessages' | keyof MailResources
> &
  Partial<Pick<MailResources, 'dkimSigning'>> & {
    /** This process runs the MTA thread too (main.ts decides it): spooled submissions reach it in memory. */
    mtaThreadHere?: boolean;
  };

export interface SmtpListener {
  name: 'submission' | 'submission-tls' | 'inbound';
  host: string;
  port: number;
}

export interface SmtpEdge {
  listeners: SmtpListener[];
  close(): Promise<void>;
}

/** Whether the configuration asks for any SMTP listener (a role with none starts nothing). */
export function smtpEdgeConfigured(config: Config): boolean {
  return config.smtpSubmissionPort !== null || config.smtpSubmissionTlsPort !== null || config.smtpInboundPort > 0;
}

function listen(server: SMTPServer, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(new Error(`Cannot listen for SMTP on ${host}:${port}: ${error.message}`));
    server.server.once('error', onError);
    server.listen(port, host, () => {
      server.server.off('error', onError);
      resolve((server.server.address() as { port: number }).port);
    });
  });
}

function closeServer(server: SMTPServer): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

export async function startSmtpEdge(base: SmtpEdgeDeps, config: Config = base.config): Promise<SmtpEdge> {
  const { log } = base;
  const wanted = [
    { name: 'submission' as const, port: config.smtpSubmissionPort, implicitTls: false },
    { name: 'submission-tls' as const, port: config.smtpSubmissionTlsPort, implicitTls: true },
  ].filter(
    (entry): entry is { name: 'submission' | 'submission-tls'; port: number; implicitTls: boolean } =>
      entry.port !== null,
  );
  const inbound = config.smtpInboundPort > 0;
  if (wanted.length === 0 && !inbound) return { listeners: [], close: async () => {} };
  // smtp-server's DATA reader, its byte loop made a native search (./data-stream.ts).
  await installFastDataStream();

  const tls = loadSmtpTls(config);
  if (tls.generatedAt) {
    log.warn(
      { dir: tls.generatedAt, host: config.smtpSubmissionHost },
      'generated a self-signed certificate for SMTP TLS: set SMTP_SUBMISSION_TLS_CERT and SMTP_SUBMISSION_TLS_KEY to serve a real one',
    );
  }
  // Keys and tenant state cached as the API caches them, invalidated by the same NOTIFY channel.
  const tenantState = await createTenantStateCache({
    sql: base.db.sql,
    listenUrl: base.db.embedded ? null : base.db.url,
    onListenError: (error) => log.warn({ err: error.message }, 'SMTP edge: tenant state LISTEN lost, retrying'),
  });
  const mail = createMailResources(config, base.secrets, base.db.sequelize, base.dkimSigning, log);
  const deps: SmtpDeps = {
    ...base,
    ...mail,
    config,
    tenantState,
    acceptGroups: createAcceptGroups(base.db.sql),
    sendContext: createSendContextCache(base.db.sql, base.secrets),
    // A spooled submission reaches this process's MTA thread in memory; the MTA of another node reads it
    // from the spool.
    spooledMessages: base.mtaThreadHere ? new SpooledMessageAnnouncer() : null,
  };
  const metrics = createMetricsReporter();
  const state = createSubmissionState(deps);
  const servers: SMTPServer[] = [];
  const listeners: SmtpListener[] = [];
  // A configured pair is re-read on SIGHUP (certbot renews in place), as the API's is; open
  // connections finish on the old one.
  const stopReload = config.smtpSubmissionTlsCertFile
    ? onHangupReload(
        'SMTP TLS certificate',
        () => readConfiguredSmtpTls(config),
        (pair) => servers.forEach((server) => server.updateSecureContext(pair)),
        log,
        config.smtpSubmissionTlsCertFile,
      )
    : () => {};
  const close = async () => {
    stopReload();
    await Promise.all(servers.map(closeServer));
    await tenantState.close();
    await closeMailResources(mail);
    deps.spooledMessages?.close();
    metrics.close();
  };
  try {
    for (const entry of wanted) {
      const server = createSubmissionServer(deps, state, { tls, implicitTls: entry.implicitTls });
      server.on('error', (error) => log.warn({ err: error.message, listener: entry.name }, 'smtp connection error'));
      servers.push(server);
      const port = await listen(server, entry.port, config.smtpSubmissionHost);
      listeners.push({ name: entry.name, host: config.smtpSubmissionHost, port });
      log.info(
        {
          listener: entry.name,
          host: config.smtpSubmissionHost,
          port,
          tls: entry.implicitTls ? 'implicit' : 'STARTTLS',
          cert: tls.certFile,
          plaintextAuth: insecureAuthAllowed(config),
        },
        `SMTP ${entry.name} listening on ${config.smtpSubmissionHost}:${port}`,
      );
    }
    if (inbound) {
      // Complaints and bounces it applies reach this node's /metrics like a worker thread's counts.
      const server = createInboundServer({ ...deps, metrics }, { tls });
      server.on('error', (error) => log.warn({ err: error.message, listener: 'inbound' }, 'smtp connection error'));
      servers.push(server);
      const port = await listen(server, config.smtpInboundPort, config.smtpInboundHost);
      listeners.push({ name: 'inbound', host: config.smtpInboundHost, port });
      log.info(
        { listener: 'inbound', host: config.smtpInboundHost, port, tls: 'STARTTLS' },
        `inbound SMTP listening on ${config.smtpInboundHost}:${port}`,
      );
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { listeners, close };
}
